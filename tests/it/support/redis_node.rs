//! A `RedisNode` on one real master, ready as the monitor leaves it once
//! the master passed its checks: for the tests of the scripts and of the
//! node layer that run without a daemon.

use crate::support;

use std::time::Duration;

use fred::prelude::{ClientLike, KeysInterface};
use redlockd::redis::connect::RedisNodeConfig;
use redlockd::redis::node::RedisNode;
use redlockd::redlock::node::Probed;

pub(crate) const TTL: Duration = Duration::from_secs(10);
/// The key of the lock on `r`.
pub(crate) static KEY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| support::keys::of("r"));

pub(crate) fn node_config(url: String) -> RedisNodeConfig {
    RedisNodeConfig {
        url,
        key_prefix: "redlockd".into(),
        connect_timeout: Duration::from_secs(2),
        command_timeout: Duration::from_secs(1),
        reconnect_min_delay: Duration::from_millis(20),
        reconnect_max_delay: Duration::from_millis(200),
        node_timeout: Duration::from_millis(100),
        writer_wait: Duration::from_millis(500),
        tls: None,
    }
}

pub(crate) async fn node(url: String) -> RedisNode {
    let node = RedisNode::connect(&node_config(url)).unwrap();
    node.wait_connected(Duration::from_secs(5)).await.unwrap();
    // What the monitor does once a node passed its checks.
    let seen = Probed::probe(&node).await.unwrap();
    Probed::repair(&node, &support::keys::every_bucket(), &seen.identity())
        .await
        .unwrap();
    node
}

/// `GET key` on the master at `url`, through a fresh connection.
pub(crate) async fn read(url: &str, key: &str) -> Option<String> {
    let admin = fred::prelude::Client::new(fred::prelude::Config::from_url(url).unwrap(), None, None, None);
    admin.init().await.unwrap();
    let value: Option<String> = admin.get(key).await.unwrap();
    let _ = admin.quit().await;
    value
}
