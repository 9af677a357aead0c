//! How a master's process is proved and watched, against real masters:
//! the script cache as proof of process (docs/design.md#process-identity),
//! probes on their own connection, and a lock request written after its
//! round gave up.

use std::time::Duration;

use fred::prelude::{ClientLike, KeysInterface, LuaInterface};
use redlockd::dev::{RedisProcess, find_redis_server};
use redlockd::redis::connect::RedisNodeConfig;
use redlockd::redis::node::RedisNode;
use redlockd::redlock::node::Probed;
use redlockd::redlock::{Announce, LockValue, Node, NodeError};

use crate::support::redis_node::{KEY, TTL, node, node_config, read};
use crate::support::{self, Cluster};

/// A probe does not queue behind lock traffic: with the lock connection
/// stalled (a blocking command on it, as a flood of lock requests would),
/// the monitor still sees the master at once.
#[tokio::test]
async fn a_probe_answers_while_the_lock_connection_is_stalled() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let stalled = node.client().clone();
    let blocking = tokio::spawn(async move {
        let command = fred::types::CustomCommand::new_static("BLPOP", fred::types::ClusterHash::FirstKey, true);
        let _: Result<fred::prelude::Value, _> = stalled.custom(command, vec!["never-pushed", "3"]).await;
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Lock traffic waits behind the blocked command...
    let value = LockValue::random();
    let lock = tokio::time::timeout(
        Duration::from_millis(500),
        node.try_lock(KEY.as_str(), value.expose(), TTL, ""),
    )
    .await;
    assert!(
        lock.is_err(),
        "the lock connection was not stalled: the test shows nothing"
    );
    // ...the probe does not.
    let seen = tokio::time::timeout(Duration::from_millis(500), Probed::probe(&node))
        .await
        .expect("the probe queued behind lock traffic")
        .unwrap();
    assert_eq!(seen.role, "master");
    blocking.await.unwrap();
}

/// How many times `command` ran on the master (INFO commandstats; an
/// `info` count includes the INFO of the look before).
async fn calls_of(admin: &fred::prelude::Client, command: &str) -> u64 {
    let stats: String = admin.info(Some(fred::types::InfoKind::CommandStats)).await.unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    stats
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// On a Redis 7 master this daemon verified, the script cache proves the
/// process (docs/design.md#process-identity): grants cost no `INFO` call.
/// Until a probe has seen the marker name the running process, they do.
#[tokio::test]
async fn a_verified_master_grants_without_an_info_call_and_an_unproved_one_with_one_per_batch() {
    let cluster = Cluster::start(1);
    let admin = cluster.admin(0).await;
    // `node` probes before it repairs: the marker was not there yet, so the
    // cached scripts are not in use.
    let node = node(cluster.masters[0].url()).await;
    let infos = calls_of(&admin, "info").await;
    for i in 0..5 {
        let value = LockValue::random();
        assert!(
            node.try_lock(&support::keys::of(&format!("r:u{i}")), value.expose(), TTL, "")
                .await
                .unwrap()
                .is_some()
        );
    }
    // (Each look is an INFO itself: 1 more.)
    assert_eq!(
        calls_of(&admin, "info").await - infos,
        5 + 1,
        "one INFO per batch without the proof"
    );
    // A probe sees the marker name the running process and loads them.
    Probed::probe(&node).await.unwrap();
    let infos = calls_of(&admin, "info").await;
    for i in 0..5 {
        let value = LockValue::random();
        assert!(
            node.try_lock(&support::keys::of(&format!("r:p{i}")), value.expose(), TTL, "")
                .await
                .unwrap()
                .is_some()
        );
    }
    let old = LockValue::random();
    node.try_lock(&support::keys::of("r:h"), old.expose(), TTL, "")
        .await
        .unwrap()
        .unwrap();
    let swap = node
        .hand_off(
            &support::keys::of("r:h"),
            old.expose(),
            LockValue::random().expose(),
            TTL,
            "",
        )
        .await
        .unwrap();
    assert!(swap.counter.is_some());
    assert_eq!(
        calls_of(&admin, "info").await - infos,
        1,
        "grants called INFO on a proved process"
    );
    // Someone flushes the scripts: the process is the same, so the batch
    // goes again with the INFO check and is granted; the next probe loads
    // the cached scripts again.
    admin.script_flush(false).await.unwrap();
    let value = LockValue::random();
    assert!(
        node.try_lock(&support::keys::of("r:f"), value.expose(), TTL, "")
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        calls_of(&admin, "info").await - infos,
        1 + 2,
        "the fallback checks by INFO"
    );
}

/// On a proved master a grant reads no marker: a bucket's counter stands
/// for it (docs/design.md#process-identity). So no script may leave a
/// counter where the marker is gone: after a `FLUSHALL` (which keeps the
/// script cache) the next grant finds neither and refuses, and round 2 for
/// a lock written there by hand does not make a counter either (were it
/// to, the cached grant after it would go through: the check that fails
/// without the rule). A missing counter beside a marker is seeded from
/// the master's clock.
#[tokio::test]
async fn on_a_proved_master_no_counter_is_made_where_the_marker_is_gone() {
    let cluster = Cluster::start(1);
    let admin = cluster.admin(0).await;
    let node = node(cluster.masters[0].url()).await;
    Probed::probe(&node).await.unwrap();
    let infos = calls_of(&admin, "info").await;
    let value = LockValue::random();
    assert!(
        node.try_lock(KEY.as_str(), value.expose(), TTL, "")
            .await
            .unwrap()
            .is_some()
    );
    // (The look itself is an INFO: 1 more.)
    assert_eq!(
        calls_of(&admin, "info").await,
        infos + 1,
        "the proof was not in use: the test shows nothing"
    );
    let fence = support::keys::fence("lock:r");
    let _: () = admin.flushall(false).await.unwrap();
    let refused = node.try_lock(KEY.as_str(), LockValue::random().expose(), TTL, "").await;
    assert!(refused.as_ref().is_err_and(NodeError::is_unverified), "{refused:?}");
    assert_eq!(
        admin.exists::<i64, _>(fence.as_str()).await.unwrap(),
        0,
        "a refused grant left a counter"
    );
    // Round 2 for a lock that is there (written by hand) makes no counter.
    let _: () = admin
        .set(KEY.as_str(), value.expose(), None, None, false)
        .await
        .unwrap();
    assert!(!node.publish_fence(KEY.as_str(), value.expose(), 7).await.unwrap());
    assert_eq!(
        admin.exists::<i64, _>(fence.as_str()).await.unwrap(),
        0,
        "round 2 made a counter"
    );
    let _: i64 = admin.del(KEY.as_str()).await.unwrap();
    let refused = node.try_lock(KEY.as_str(), LockValue::random().expose(), TTL, "").await;
    assert!(refused.is_err(), "granted without a marker: {refused:?}");
    // Repaired (markers back, no counters): the counter starts at the clock.
    let seen = Probed::probe(&node).await.unwrap();
    Probed::repair(&node, &support::keys::every_bucket(), &seen.identity())
        .await
        .unwrap();
    let granted = node
        .try_lock(KEY.as_str(), LockValue::random().expose(), TTL, "")
        .await
        .unwrap()
        .unwrap();
    assert!(
        // Microseconds since 1970 (after 2001), not a count from 1.
        granted > 1_000_000_000_000_000,
        "seeded at {granted}"
    );
    let _ = admin.quit().await;
}

/// A master restarted with its data (AOF) keeps the marker, but not the
/// cached scripts: its first grant is refused as unverified, before any
/// probe. `appendfsync always`: with `everysec` a loaded machine's fsync
/// may hold the AOF write back past the kill -9 (seen on Redis 6.2), and the
/// restart then keeps nothing.
#[tokio::test]
async fn a_master_restarted_with_its_data_loses_the_proof_and_refuses_grants() {
    let binary = find_redis_server().unwrap();
    let mut master = RedisProcess::start(&binary, &["--appendonly", "yes", "--appendfsync", "always"]).unwrap();
    let node = node(master.url()).await;
    Probed::probe(&node).await.unwrap();
    let value = LockValue::random();
    assert!(
        node.try_lock(&support::keys::of("r:a"), value.expose(), TTL, "")
            .await
            .unwrap()
            .is_some()
    );
    master.restart().unwrap();
    assert!(
        read(&master.url(), &support::keys::marker("lock:r:a")).await.is_some(),
        "the restart lost the marker"
    );
    let refused = match node
        .try_lock(&support::keys::of("r:b"), LockValue::random().expose(), TTL, "")
        .await
    {
        Err(e) => e,
        Ok(Some(_)) => panic!("a restarted, unverified process granted a lock"),
        Ok(None) => unreachable!("nobody holds the key"),
    };
    assert!(
        refused.is_unverified() || refused.to_string().contains("connection"),
        "{refused}"
    );
}

/// Why the cached scripts are loaded only into processes this daemon
/// verified (the control): the cached ROUND has no check of its own, so in
/// a restarted process that had been handed it, it grants where the INFO
/// variant refuses.
#[tokio::test]
async fn control_the_cached_round_grants_wherever_it_is_loaded() {
    let binary = find_redis_server().unwrap();
    let mut master = RedisProcess::start(&binary, &["--appendonly", "yes", "--appendfsync", "always"]).unwrap();
    let node = node(master.url()).await;
    drop(node);
    master.restart().unwrap();
    let admin = fred::prelude::Client::new(
        fred::prelude::Config::from_url(&master.url()).unwrap(),
        None,
        None,
        None,
    );
    admin.init().await.unwrap();
    let (cached, _) = redlockd::redis::scripts::cached_variants("control");
    let round = |lua: String| {
        let admin = admin.clone();
        async move {
            let keys = vec![
                support::keys::of("c"),
                support::keys::beside("lock:c", "waiting:"),
                support::keys::fence("lock:c"),
                support::keys::marker("lock:c"),
            ];
            let value = LockValue::random();
            let args = vec!["tag", "PUBLISH", "500", "L", value.expose(), "10000", "d\nt\no"];
            admin.eval::<Vec<i64>, _, _, _>(lua, keys, args).await.unwrap()[0]
        }
    };
    assert_eq!(
        round(redlockd::redis::scripts::SCRIPTS.round.lua.clone()).await,
        -2,
        "the INFO check refuses"
    );
    assert!(
        round(cached.lua).await > 0,
        "the cached variant granted nothing: the control shows nothing"
    );
}

/// The engine stops waiting for a master at `node_timeout`, long before
/// fred gives up on the command: a lock request it abandoned may still be
/// written, and granted, later. The attempt's cleanup release, sent after
/// it, travels behind it on the same connection (one batch at a time per
/// master), so it lands after the late grant and deletes it: nothing is
/// left held until the TTL.
#[tokio::test]
async fn a_lock_request_written_after_its_round_gave_up_is_deleted_by_the_release_behind_it() {
    use support::proxy::{Mode, Proxy};
    let cluster = Cluster::start(1);
    let proxy = Proxy::start(([127, 0, 0, 1], cluster.masters[0].port()).into()).await;
    let node = RedisNode::connect(&RedisNodeConfig {
        // fred waits far longer than the round: the request stays on its way.
        command_timeout: Duration::from_secs(20),
        ..node_config(proxy.url())
    })
    .unwrap();
    node.wait_connected(Duration::from_secs(5)).await.unwrap();
    let seen = Probed::probe(&node).await.unwrap();
    Probed::repair(&node, &support::keys::every_bucket(), &seen.identity())
        .await
        .unwrap();
    proxy.set_mode(Mode::Blackhole);
    let value = LockValue::random();
    // The round's bound passes: the engine moves on without an answer.
    let lock = tokio::time::timeout(
        Duration::from_millis(100),
        node.try_lock(KEY.as_str(), value.expose(), TTL, ""),
    )
    .await;
    assert!(lock.is_err(), "the link is down: no answer can have come");
    let cleanup = tokio::time::timeout(
        Duration::from_millis(100),
        node.unlock(KEY.as_str(), value.expose(), Announce::No),
    );
    assert!(cleanup.await.is_err());
    // The partition heals: the lock request reaches the master first, then
    // the release.
    let admin = cluster.admin(0).await;
    let fence_before = cluster.fence(0, "r").await;
    proxy.set_mode(Mode::Pass);
    tokio::time::timeout(Duration::from_secs(10), node.settled())
        .await
        .expect("the requests never settled");
    // Settled: the release was answered, so the lock request ahead of it
    // ran too.
    let held: Option<String> = admin.get(KEY.as_str()).await.unwrap();
    assert_ne!(
        cluster.fence(0, "r").await,
        fence_before,
        "the abandoned lock request was never written: the test shows nothing"
    );
    assert_eq!(held, None, "the late grant outlived the release sent after it");
}
