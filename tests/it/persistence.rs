//! A master's persistence: restarted with `appendonly` it keeps its lock and
//! its counter; restarted empty it keeps neither.

use crate::support;

use redlockd::dev::{RedisProcess, find_redis_server};
use redlockd::redlock::{LockValue, Node};
use support::redis_node::{KEY, TTL, node, read};

#[tokio::test]
async fn a_master_with_appendonly_restarted_keeps_its_lock_and_counter_and_one_restarted_empty_does_not() {
    let binary = find_redis_server().unwrap();
    let mut master = RedisProcess::start(&binary, &["--appendonly", "yes", "--appendfsync", "always"]).unwrap();
    let node = node(master.url()).await;
    let value = LockValue::random();
    let counter = node
        .try_lock(KEY.as_str(), value.expose(), TTL, "")
        .await
        .unwrap()
        .unwrap();
    master.restart().unwrap();
    let held = read(&master.url(), KEY.as_str()).await;
    assert_eq!(
        held.as_deref().and_then(|h| h.split('\n').next()),
        Some(value.expose()),
        "the lock did not survive a restart with AOF"
    );
    assert_eq!(
        read(&master.url(), &support::keys::fence("lock:r")).await,
        Some(counter.to_string())
    );

    master.restart_empty().unwrap();
    assert_eq!(read(&master.url(), KEY.as_str()).await, None, "restart_empty kept data");
}
