//! A release reaches its master, on one real `redis-server`: never before
//! its own lock, sent again after its connection was lost, and carried to
//! its answer after its caller stopped waiting (`settled` waits for it).

use crate::support;

use std::time::Duration;

use fred::prelude::{ClientLike, KeysInterface, LuaInterface};
use redlockd::redis::connect::RedisNodeConfig;
use redlockd::redis::node::RedisNode;
use redlockd::redlock::node::Probed;
use redlockd::redlock::{Announce, LockValue, Node};
use support::Cluster;
use support::redis_node::{KEY, TTL, node, node_config};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_asked_right_after_its_lock_never_overtakes_it() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    for round in 0..20 {
        // Other requests keep a batch on its way, so both queue behind it.
        let busy: Vec<LockValue> = (0..8).map(|_| LockValue::random()).collect();
        let busy_keys: Vec<String> = (0..8).map(|i| support::keys::of(&format!("busy{round}-{i}"))).collect();
        let value = LockValue::random();
        let key = support::keys::of(&format!("o{round}"));
        let busy_locks = futures::future::join_all(
            busy_keys
                .iter()
                .zip(&busy)
                .map(|(k, v)| node.try_lock(k, v.expose(), TTL, "")),
        );
        let (_, locked, released) = tokio::join!(
            busy_locks,
            node.try_lock(&key, value.expose(), TTL, ""),
            node.unlock(&key, value.expose(), Announce::No)
        );
        assert!(locked.unwrap().is_some());
        assert!(released.unwrap(), "round {round}: the release went before its lock");
        assert_eq!(admin.get::<Option<String>, _>(&key).await.unwrap(), None);
    }
}

/// Runs `CLIENT args…` on `admin`.
async fn client_command(admin: &fred::prelude::Client, args: Vec<&str>) -> fred::prelude::Value {
    let client = fred::types::CustomCommand::new_static("CLIENT", fred::types::ClusterHash::FirstKey, false);
    admin.custom(client, args).await.unwrap()
}

/// A release whose connection closes before the master ran it is not lost:
/// fred writes it again on the new connection (scripts run with fred's
/// default attempts, see `eval_script`), and the lock does not stay until
/// its TTL. Fails when fred answers such a command with an error instead.
#[tokio::test]
async fn a_release_lost_with_its_connection_is_sent_again_after_the_reconnection() {
    let cluster = Cluster::start(1);
    // A command timeout longer than the wait below can take on a busy machine.
    let node = RedisNode::connect(&RedisNodeConfig {
        command_timeout: Duration::from_secs(20),
        ..node_config(cluster.masters[0].url())
    })
    .unwrap();
    node.wait_connected(Duration::from_secs(5)).await.unwrap();
    let seen = Probed::probe(&node).await.unwrap();
    Probed::repair(&node, &support::keys::every_bucket(), &seen.identity())
        .await
        .unwrap();
    let admin = cluster.admin(0).await;
    let value = LockValue::random();
    assert!(
        node.try_lock(KEY.as_str(), value.expose(), TTL, "")
            .await
            .unwrap()
            .is_some()
    );
    // The master holds commands that write: the release reaches it and
    // waits there; then its connection is killed, so it never runs there.
    client_command(&admin, vec!["PAUSE", "10000", "WRITE"]).await;
    let release = node.unlock(KEY.as_str(), value.expose(), Announce::No);
    let kill = async {
        let mut held = None;
        for _ in 0..400 {
            let clients: String = client_command(&admin, vec!["LIST"]).await.convert().unwrap();
            held = clients
                .lines()
                .find(|line| line.contains("flags=b ") && line.contains("cmd=evalsha"))
                .and_then(|line| line.split(' ').find_map(|field| field.strip_prefix("id=")))
                .map(str::to_owned);
            if held.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let id = held.expect("the release never reached the master");
        // The lock connection only (the probe connection is another).
        let killed: i64 = client_command(&admin, vec!["KILL", "ID", id.as_str()])
            .await
            .convert()
            .unwrap();
        assert_eq!(killed, 1, "the node's connection was not killed");
        client_command(&admin, vec!["UNPAUSE"]).await;
    };
    let (released, ()) = tokio::join!(release, kill);
    assert!(released.unwrap(), "the release was not sent again");
    assert_eq!(
        admin.exists::<i64, _>(KEY.as_str()).await.unwrap(),
        0,
        "the lock stayed"
    );
}

/// A release whose caller stops waiting (the engine answers at quorum) is
/// still carried to its answer, a NOSCRIPT reload included, and
/// `settled` (what shutdown waits for) resolves only then.
#[tokio::test]
async fn an_abandoned_release_still_lands_and_settled_waits_for_it() {
    use support::proxy::{Mode, Proxy};
    let cluster = Cluster::start(1);
    let proxy = Proxy::start(([127, 0, 0, 1], cluster.masters[0].port()).into()).await;
    let node = node(proxy.url()).await;
    let value = LockValue::random();
    node.try_lock(KEY.as_str(), value.expose(), TTL, "")
        .await
        .unwrap()
        .unwrap();

    proxy.set_mode(Mode::Blackhole);
    let admin = cluster.admin(0).await;
    admin.script_flush(false).await.unwrap();
    // Polled (sent), then dropped unanswered.
    let abandoned = tokio::time::timeout(
        Duration::from_millis(50),
        node.unlock(KEY.as_str(), value.expose(), Announce::No),
    );
    assert!(abandoned.await.is_err(), "the link is down: no answer can have come");
    assert!(
        tokio::time::timeout(Duration::from_millis(300), node.settled())
            .await
            .is_err(),
        "settled while a release was still on its way"
    );
    proxy.set_mode(Mode::Pass);
    tokio::time::timeout(Duration::from_secs(5), node.settled())
        .await
        .expect("the release never settled");
    let held: Option<String> = admin.get(KEY.as_str()).await.unwrap();
    assert_eq!(held, None, "the abandoned release did not land");
}
