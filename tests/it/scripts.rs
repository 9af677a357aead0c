//! The Lua scripts and the fred adapter against one real `redis-server`:
//! idempotence under re-sends, the round-2 guard, NOSCRIPT reload, large
//! counters, and ACL credentials in the URL.

use crate::support;

use std::time::Duration;

use fred::prelude::{ClientLike, KeysInterface, LuaInterface};
use redlockd::dev::{RedisProcess, find_redis_server};
use redlockd::redis::connect::RedisNodeConfig;
use redlockd::redis::node::RedisNode;
use redlockd::redlock::node::Probed;
use redlockd::redlock::{Announce, Extension, LockValue, Node, Swap};
use support::Cluster;

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

#[tokio::test]
async fn a_resent_lock_command_succeeds_again_with_a_fresh_counter() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let value = LockValue::random();
    let first = node
        .try_lock(KEY.as_str(), value.expose(), TTL, "")
        .await
        .unwrap()
        .unwrap();
    let again = node
        .try_lock(KEY.as_str(), value.expose(), TTL, "")
        .await
        .unwrap()
        .unwrap();
    assert!(again > first, "a re-send must not hand out a counter twice");
    let other = LockValue::random();
    assert_eq!(
        node.try_lock(KEY.as_str(), other.expose(), TTL, "").await.unwrap(),
        None
    );
}

/// How many `write`-family system calls this process has made.
fn writes_so_far() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .expect("/proc/self/io")
        .lines()
        .find_map(|l| l.strip_prefix("syscw:"))
        .expect("syscw in /proc/self/io")
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn concurrent_scripts_reach_the_master_in_shared_writes() {
    const N: u64 = 64;
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let values: Vec<LockValue> = (0..N).map(|_| LockValue::random()).collect();
    let keys: Vec<String> = (0..N).map(|i| support::keys::of(&format!("r{i}"))).collect();
    let before = writes_so_far();
    let granted = futures::future::join_all(
        keys.iter()
            .zip(&values)
            .map(|(key, value)| node.try_lock(key, value.expose(), TTL, "")),
    )
    .await;
    let writes = writes_so_far() - before;
    assert!(granted.iter().all(|g| matches!(g, Ok(Some(_)))), "{granted:?}");
    // A flush per script would be a write per script; scripts queued
    // together leave in a few writes.
    assert!(writes <= N / 4, "{N} scripts took {writes} writes");
}

/// Hands `holder`'s lock on KEY.as_str() to itself; whether the hand-off reported a
/// waiter on another daemon.
async fn sees_a_waiter_elsewhere(node: &RedisNode, holder: &LockValue) -> bool {
    let swap = node
        .hand_off(KEY.as_str(), holder.expose(), holder.expose(), TTL, "")
        .await
        .unwrap();
    assert!(swap.was_held && swap.counter.is_some(), "{swap:?}");
    swap.waited
}

#[tokio::test]
async fn a_hand_off_swaps_only_its_own_or_a_free_key_and_advances_the_counter() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let (old, new, stranger) = (LockValue::random(), LockValue::random(), LockValue::random());
    let first = node
        .try_lock(KEY.as_str(), old.expose(), TTL, "")
        .await
        .unwrap()
        .unwrap();
    let swap = node
        .hand_off(KEY.as_str(), old.expose(), new.expose(), TTL, "")
        .await
        .unwrap();
    let (was, counter) = (swap.was_held, swap.counter);
    assert!(was);
    assert!(!swap.waited, "nobody was refused yet");
    let counter = counter.expect("granted");
    assert!(counter > first);
    let admin = cluster.admin(0).await;
    // The key holds the new value, then its holder record.
    let holder: Option<String> = admin.get(KEY.as_str()).await.unwrap();
    let holder = holder.unwrap();
    assert_eq!(holder.split('\n').next(), Some(new.expose()), "{holder:?}");
    assert_eq!(
        holder.split('\n').nth(1),
        Some(counter.to_string().as_str()),
        "{holder:?}"
    );
    let pttl: i64 = admin.pttl(KEY.as_str()).await.unwrap();
    assert!(pttl > 0 && pttl <= 10_000, "{pttl}");
    // A re-send finds its own value: granted again with a fresh counter.
    let Swap {
        was_held: was,
        counter: again,
        ..
    } = node
        .hand_off(KEY.as_str(), old.expose(), new.expose(), TTL, "")
        .await
        .unwrap();
    assert!(!was && again.unwrap() > counter);
    // A refused attempt marks the lock with its daemon's tag: a hand-off
    // reports only another daemon's mark, and leaves it (for the release
    // that announces).
    assert_eq!(
        node.try_lock(KEY.as_str(), stranger.expose(), TTL, "").await.unwrap(),
        None
    );
    let swap = node
        .hand_off(KEY.as_str(), new.expose(), new.expose(), TTL, "")
        .await
        .unwrap();
    assert!(!swap.waited && swap.was_held && swap.counter.is_some(), "{swap:?}");
    let elsewhere = self::node(cluster.masters[0].url()).await;
    assert_eq!(
        elsewhere
            .try_lock(KEY.as_str(), stranger.expose(), TTL, "")
            .await
            .unwrap(),
        None
    );
    assert!(sees_a_waiter_elsewhere(&node, &new).await);
    // Both daemons waited: each one's hand-off sees the other.
    assert!(sees_a_waiter_elsewhere(&elsewhere, &new).await);
    assert_eq!(
        node.try_lock(KEY.as_str(), stranger.expose(), TTL, "").await.unwrap(),
        None
    );
    assert!(sees_a_waiter_elsewhere(&node, &new).await);
    // Someone else's lock is left alone.
    let Swap {
        was_held: was,
        counter: none,
        ..
    } = node
        .hand_off(KEY.as_str(), stranger.expose(), old.expose(), TTL, "")
        .await
        .unwrap();
    assert_eq!((was, none), (false, None));
    let held = admin.get::<Option<String>, _>(KEY.as_str()).await.unwrap().unwrap();
    assert_eq!(held.split('\n').next(), Some(new.expose()));
    // A free key is granted (the old lock had expired).
    let _: i64 = admin.del(KEY.as_str()).await.unwrap();
    let Swap {
        was_held: was,
        counter: free,
        ..
    } = node
        .hand_off(KEY.as_str(), old.expose(), stranger.expose(), TTL, "")
        .await
        .unwrap();
    assert!(!was && free.is_some());
    // A master that lost its data (no marker) only releases.
    let _: i64 = admin.del(support::keys::marker("lock:r")).await.unwrap();
    let Swap {
        was_held: was,
        counter: unverified,
        ..
    } = node
        .hand_off(KEY.as_str(), stranger.expose(), old.expose(), TTL, "")
        .await
        .unwrap();
    assert_eq!((was, unverified), (true, None));
    assert_eq!(admin.exists::<i64, _>(KEY.as_str()).await.unwrap(), 0);
    let _ = admin.quit().await;
}

#[tokio::test]
async fn a_marker_from_another_process_is_refused_as_unverified() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    // What a promoted replica, or a restart that kept its data, looks like:
    // the marker names a process that is no longer running.
    let marker: String = admin.get(support::keys::marker("lock:r")).await.unwrap();
    let (_, replid) = marker.split_once(':').unwrap();
    let _: () = admin
        .set(
            support::keys::marker("lock:r"),
            format!("0123456789abcdef:{replid}"),
            None,
            None,
            false,
        )
        .await
        .unwrap();
    let value = LockValue::random();
    let refused = node.try_lock(KEY.as_str(), value.expose(), TTL, "").await.unwrap_err();
    assert!(refused.0.contains("UNVERIFIED"), "{refused}");
    let Swap {
        was_held: was,
        counter: granted,
        ..
    } = node
        .hand_off(KEY.as_str(), value.expose(), value.expose(), TTL, "")
        .await
        .unwrap();
    assert_eq!((was, granted), (false, None));
    assert_eq!(admin.exists::<i64, _>(KEY.as_str()).await.unwrap(), 0);
    // A lock held by another owner is refused before the node is checked
    // (a refusal grants nothing); one this owner already holds (a re-sent
    // try) is not granted again by an unverified node.
    let _: () = admin
        .set(KEY.as_str(), "another owner", None, None, false)
        .await
        .unwrap();
    assert_eq!(
        node.try_lock(KEY.as_str(), value.expose(), TTL, "").await.unwrap(),
        None
    );
    assert_eq!(admin.get::<String, _>(KEY.as_str()).await.unwrap(), "another owner");
    let _: () = admin
        .set(KEY.as_str(), value.expose(), None, None, false)
        .await
        .unwrap();
    let refused = node.try_lock(KEY.as_str(), value.expose(), TTL, "").await.unwrap_err();
    assert!(refused.0.contains("UNVERIFIED"), "{refused}");
    let _: i64 = admin.del(KEY.as_str()).await.unwrap();
    // The daemon's repair writes this process's identity back: usable again.
    let _: () = admin
        .set(support::keys::marker("lock:r"), marker, None, None, false)
        .await
        .unwrap();
    assert!(
        node.try_lock(KEY.as_str(), value.expose(), TTL, "")
            .await
            .unwrap()
            .is_some()
    );
    let _ = admin.quit().await;
}

#[tokio::test]
async fn the_fence_is_published_only_by_the_holder_and_only_upwards() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let value = LockValue::random();
    let counter = node
        .try_lock(KEY.as_str(), value.expose(), TTL, "")
        .await
        .unwrap()
        .unwrap();
    let stranger = LockValue::random();
    assert!(
        !node
            .publish_fence(KEY.as_str(), stranger.expose(), counter + 100)
            .await
            .unwrap()
    );
    assert_eq!(cluster.fence(0, "r").await, Some(counter.to_string()));
    assert!(
        node.publish_fence(KEY.as_str(), value.expose(), counter + 100)
            .await
            .unwrap()
    );
    assert_eq!(cluster.fence(0, "r").await, Some((counter + 100).to_string()));
    assert!(node.publish_fence(KEY.as_str(), value.expose(), counter).await.unwrap());
    assert_eq!(
        cluster.fence(0, "r").await,
        Some((counter + 100).to_string()),
        "the fence went down"
    );
}

#[tokio::test]
async fn counters_near_two_to_the_53_keep_every_digit() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    let big: u64 = (1 << 53) - 10;
    let _: () = admin
        .set(support::keys::fence("lock:r"), big, None, None, false)
        .await
        .unwrap();
    let value = LockValue::random();
    assert_eq!(
        node.try_lock(KEY.as_str(), value.expose(), TTL, "").await.unwrap(),
        Some(big + 1)
    );
    assert!(node.publish_fence(KEY.as_str(), value.expose(), big + 5).await.unwrap());
    assert_eq!(cluster.fence(0, "r").await, Some((big + 5).to_string()));
    // At 2^53 - 1, and above, where Lua's doubles round, nothing is granted
    // (a counter value could be handed out twice) and nothing is written.
    for full in [(1u64 << 53) - 1, (1 << 53) + 1] {
        let _: () = admin
            .set(support::keys::fence("lock:full"), full, None, None, false)
            .await
            .unwrap();
        let other = LockValue::random();
        let refused = node
            .try_lock(&support::keys::of("full"), other.expose(), TTL, "")
            .await
            .unwrap_err();
        assert!(refused.0.contains("COUNTER"), "{refused}");
        assert_eq!(
            admin.get::<Option<String>, _>(support::keys::of("full")).await.unwrap(),
            None
        );
        assert_eq!(cluster.fence(0, "full").await, Some(full.to_string()));
    }
}

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

/// One lock of an extension batch, to a minute.
fn for_a_minute<'a>(key: &'a str, value: &'a LockValue) -> Extension<'a> {
    Extension {
        key,
        value: value.expose(),
        ttl: Duration::from_secs(60),
    }
}

#[tokio::test]
async fn extend_and_unlock_only_touch_the_holders_key() {
    let (theirs_key, free_key) = (support::keys::of("theirs"), support::keys::of("free"));
    let (theirs_key, free_key) = (theirs_key.as_str(), free_key.as_str());
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    let (mine, theirs) = (LockValue::random(), LockValue::random());
    for (key, value) in [(KEY.as_str(), &mine), (theirs_key, &theirs)] {
        node.try_lock(key, value.expose(), Duration::from_secs(5), "")
            .await
            .unwrap()
            .unwrap();
    }
    // One batch, answered in order: each lock is extended only by its own
    // value, and a free key is not created.
    let batch = [
        for_a_minute(KEY.as_str(), &theirs),
        for_a_minute(theirs_key, &theirs),
        for_a_minute(free_key, &mine),
    ];
    assert_eq!(node.extend(&batch).await.unwrap(), [false, true, false]);
    let pttl = |key: String| {
        let admin = admin.clone();
        async move { admin.pttl::<i64, _>(key).await.unwrap() }
    };
    assert!(pttl(KEY.to_string()).await <= 5_000, "extended by another value");
    assert!(pttl(theirs_key.to_owned()).await > 5_000, "PEXPIRE did not happen");
    assert_eq!(pttl(free_key.to_owned()).await, -2, "a free key was created");
    assert!(
        !node
            .unlock(KEY.as_str(), theirs.expose(), Announce::IfWaited)
            .await
            .unwrap()
    );
    assert_eq!(node.extend(&[for_a_minute(KEY.as_str(), &mine)]).await.unwrap(), [true]);
    assert!(pttl(KEY.to_string()).await > 5_000, "PEXPIRE did not happen");
    assert!(
        node.unlock(KEY.as_str(), mine.expose(), Announce::IfWaited)
            .await
            .unwrap()
    );
    let exists: i64 = admin.exists(KEY.as_str()).await.unwrap();
    assert_eq!(exists, 0);
}

#[tokio::test]
async fn scripts_are_reloaded_after_the_node_forgets_them() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    let value = LockValue::random();
    node.try_lock(KEY.as_str(), value.expose(), TTL, "")
        .await
        .unwrap()
        .unwrap();
    let _: () = admin.script_flush(false).await.unwrap();
    assert!(
        node.unlock(KEY.as_str(), value.expose(), Announce::IfWaited)
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn an_acl_user_in_the_url_works_and_a_wrong_password_is_a_node_error() {
    let binary = find_redis_server().unwrap();
    let master = RedisProcess::start(
        &binary,
        &[
            "--user",
            "default",
            "off",
            "--user",
            "locker",
            "on",
            ">s3cret",
            // The minimal ACL docs/configuration.md documents.
            "~redlockd:*",
            "&redlockd:*",
            "+publish",
            "+subscribe",
            "+get",
            "+set",
            "+del",
            "+pexpire",
            "+incr",
            "+decr",
            "+exists",
            "+mget",
            "+time",
            "+evalsha",
            "+script|load",
            "+ping",
            "+info",
            "+config|get",
        ],
    )
    .unwrap();
    let port = master.port();
    let good = node(format!("redis://locker:s3cret@127.0.0.1:{port}")).await;
    let seen = good
        .probe()
        .await
        .expect("the monitor's probe runs under the minimal ACL");
    assert_eq!(
        (seen.role.as_str(), seen.maxmemory_policy.as_str()),
        ("master", "noeviction")
    );
    assert_eq!(seen.scripts_loaded, Ok(()));
    let value = LockValue::random();
    assert!(
        good.try_lock(KEY.as_str(), value.expose(), TTL, "")
            .await
            .unwrap()
            .is_some()
    );
    let extension = Extension {
        key: KEY.as_str(),
        value: value.expose(),
        ttl: TTL,
    };
    assert_eq!(good.extend(&[extension]).await.unwrap(), [true]);

    let bad = RedisNode::connect(&node_config(format!("redis://locker:wrong@127.0.0.1:{port}"))).unwrap();
    let outcome = tokio::time::timeout(
        Duration::from_secs(5),
        bad.unlock(KEY.as_str(), value.expose(), Announce::IfWaited),
    )
    .await;
    // An error, never "not held": the lock is still there.
    assert!(matches!(outcome, Ok(Err(_)) | Err(_)), "{outcome:?}");
    assert!(
        good.unlock(KEY.as_str(), value.expose(), Announce::IfWaited)
            .await
            .unwrap()
    );
    let _ = good.client().quit().await;
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate.
fn make_certs(dir: &std::path::Path) {
    let pki = support::certs::Pki::new(dir);
    pki.ca("ca");
    pki.issue("ca", "server", "subjectAltName=IP:127.0.0.1");
    pki.issue("ca", "client", "extendedKeyUsage=clientAuth");
}

#[tokio::test]
async fn rediss_urls_use_the_configured_ca_and_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    make_certs(dir.path());
    let file = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let tls_port = redlockd::dev::free_port().unwrap().to_string();
    let binary = find_redis_server().unwrap();
    let _master = RedisProcess::start(
        &binary,
        &[
            "--tls-port",
            &tls_port,
            "--tls-cert-file",
            &file("server.pem"),
            "--tls-key-file",
            &file("server.key"),
            "--tls-ca-cert-file",
            &file("ca.pem"),
            "--tls-auth-clients",
            "yes",
        ],
    )
    .unwrap();
    let url = format!("rediss://127.0.0.1:{tls_port}");

    let ca = dir.path().join("ca.pem");
    let (cert, key) = (dir.path().join("client.pem"), dir.path().join("client.key"));
    let (ca, cert, key) = (
        std::fs::read(ca).unwrap(),
        std::fs::read(cert).unwrap(),
        std::fs::read(key).unwrap(),
    );
    let tls = redlockd::redis::tls::connector(Some(&ca), Some((&cert, &key))).unwrap();
    let node = RedisNode::connect(&RedisNodeConfig {
        tls: Some(tls),
        ..node_config(url.clone())
    })
    .unwrap();
    node.wait_connected(Duration::from_secs(5)).await.unwrap();
    let seen = Probed::probe(&node).await.unwrap();
    Probed::repair(&node, &support::keys::every_bucket(), &seen.identity())
        .await
        .unwrap();
    let value = LockValue::random();
    assert!(
        node.try_lock(KEY.as_str(), value.expose(), TTL, "")
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        node.unlock(KEY.as_str(), value.expose(), Announce::IfWaited)
            .await
            .unwrap()
    );

    // Without the client certificate the master refuses the handshake.
    let no_cert = redlockd::redis::tls::connector(Some(&ca), None).unwrap();
    let refused = RedisNode::connect(&RedisNodeConfig {
        tls: Some(no_cert),
        ..node_config(url)
    })
    .unwrap();
    let outcome = tokio::time::timeout(
        Duration::from_secs(3),
        refused.unlock(KEY.as_str(), value.expose(), Announce::IfWaited),
    )
    .await;
    assert!(!matches!(outcome, Ok(Ok(_))), "{outcome:?}");
}

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

/// `GET key` on the master at `url`, through a fresh connection.
pub(crate) async fn read(url: &str, key: &str) -> Option<String> {
    let admin = fred::prelude::Client::new(fred::prelude::Config::from_url(url).unwrap(), None, None, None);
    admin.init().await.unwrap();
    let value: Option<String> = admin.get(key).await.unwrap();
    let _ = admin.quit().await;
    value
}

#[tokio::test]
async fn a_release_is_announced_only_when_someone_waits_for_it() {
    use fred::prelude::{EventInterface, PubsubInterface};
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let listener = fred::clients::SubscriberClient::new(
        fred::prelude::Config::from_url(&cluster.masters[0].url()).unwrap(),
        None,
        None,
        None,
    );
    listener.init().await.unwrap();
    let mut messages = listener.message_rx();
    // The channel of the lock's bucket.
    listener
        .subscribe(redlockd::redis::scripts::released_channel(&KEY))
        .await
        .unwrap();
    let mut announced = Vec::new();
    // (announce, someone tried meanwhile)
    for (i, (announce, refused_while_held)) in [
        (Announce::No, false),       // the cleanup of a failed attempt
        (Announce::IfWaited, false), // nobody waits: nothing sent
        (Announce::IfWaited, true),  // a refused attempt marked it
        (Announce::IfWaited, false), // the mark was cleared by that release
        (Announce::Always, false),   // this daemon's own waiters
    ]
    .into_iter()
    .enumerate()
    {
        let value = LockValue::random();
        node.try_lock(KEY.as_str(), value.expose(), TTL, "")
            .await
            .unwrap()
            .unwrap();
        if refused_while_held {
            let other = LockValue::random();
            assert_eq!(
                node.try_lock(KEY.as_str(), other.expose(), TTL, "").await.unwrap(),
                None
            );
        }
        assert!(node.unlock(KEY.as_str(), value.expose(), announce).await.unwrap());
        if let Ok(message) = tokio::time::timeout(Duration::from_millis(300), messages.recv()).await {
            assert_eq!(message.unwrap().value.as_string().as_deref(), Some(KEY.as_str()));
            announced.push(i);
        }
    }
    assert_eq!(announced, vec![2, 4], "which releases were announced");
    // An announced mark is gone; a stale one would only cost a message.
    assert_eq!(
        read(&cluster.masters[0].url(), &support::keys::beside("lock:r", "waiting:")).await,
        None
    );
}

/// How many `EVALSHA` calls the master has run.
async fn evalsha_calls(admin: &fred::prelude::Client) -> u64 {
    let stats: String = admin.info(Some(fred::types::InfoKind::CommandStats)).await.unwrap();
    stats
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

#[tokio::test]
async fn lock_requests_sent_at_once_share_script_calls_and_each_gets_its_own_answer() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    // Sixty locks in the bucket of `r`, sharing its counter; every third
    // one is held by another owner already.
    let keys: Vec<String> = (0..60)
        .map(|i| support::keys::in_bucket_of("lock:r", &format!("lock:b{i}")))
        .collect();
    for i in (0..60).step_by(3) {
        let _: () = admin.set(&keys[i], "another owner", None, None, false).await.unwrap();
    }
    let values: Vec<LockValue> = (0..60).map(|_| LockValue::random()).collect();
    let before = evalsha_calls(&admin).await;
    let answers = futures::future::join_all(
        keys.iter()
            .zip(&values)
            .map(|(key, value)| node.try_lock(key, value.expose(), TTL, "")),
    )
    .await;
    let calls = evalsha_calls(&admin).await - before;
    assert!(calls < 20, "60 lock requests took {calls} script calls");
    let mut counters = Vec::new();
    for (i, answer) in answers.into_iter().enumerate() {
        match answer.unwrap() {
            Some(counter) => {
                assert_ne!(i % 3, 0, "b{i} was granted over another owner");
                let held: String = admin.get(&keys[i]).await.unwrap();
                assert_eq!(held.split('\n').next(), Some(values[i].expose()));
                assert_eq!(held.split('\n').nth(1), Some(counter.to_string().as_str()), "{held:?}");
                counters.push(counter);
            }
            None => assert_eq!(i % 3, 0, "b{i} was refused"),
        }
    }
    assert_eq!(counters.len(), 40);
    counters.sort_unstable();
    counters.dedup();
    assert_eq!(counters.len(), 40, "a counter value was handed out twice");
    // The counter stored is the last one handed out.
    assert_eq!(cluster.fence(0, "r").await, Some(counters[39].to_string()));
}

#[tokio::test]
async fn a_batch_on_an_unverified_master_grants_nothing_and_still_refuses_what_is_taken() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    let _: () = admin
        .set(support::keys::of("held"), "another owner", None, None, false)
        .await
        .unwrap();
    let values: Vec<LockValue> = (0..10).map(|_| LockValue::random()).collect();
    let keys: Vec<String> = (0..10).map(|i| support::keys::of(&format!("u{i}"))).collect();
    // Every bucket of these locks names another process.
    for name in (0..10).map(|i| format!("lock:u{i}")).chain(["lock:held".to_owned()]) {
        let _: () = admin
            .set(support::keys::marker(&name), "0000:other process", None, None, false)
            .await
            .unwrap();
    }
    let answers = futures::future::join_all(
        keys.iter()
            .zip(&values)
            .map(|(key, value)| node.try_lock(key, value.expose(), TTL, "")),
    )
    .await;
    for answer in answers {
        let refused = answer.unwrap_err();
        assert!(
            refused.0.contains("UNVERIFIED node restarted or failed over"),
            "{refused}"
        );
    }
    let other = LockValue::random();
    assert_eq!(
        node.try_lock(&support::keys::of("held"), other.expose(), TTL, "")
            .await
            .unwrap(),
        None
    );
    for i in 0..10 {
        assert_eq!(
            admin
                .get::<Option<String>, _>(support::keys::of(&format!("u{i}")))
                .await
                .unwrap(),
            None
        );
        let fence = cluster.fence(0, &format!("u{i}")).await;
        assert_eq!(fence, None, "an unverified batch moved the counter");
    }
}

#[tokio::test]
async fn releases_sent_at_once_share_script_calls_and_each_gets_its_own_answer() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    let values: Vec<LockValue> = (0..60).map(|_| LockValue::random()).collect();
    let keys: Vec<String> = (0..60).map(|i| support::keys::of(&format!("u{i}"))).collect();
    for (key, value) in keys.iter().zip(&values) {
        assert!(node.try_lock(key, value.expose(), TTL, "").await.unwrap().is_some());
    }
    // Every third release names a value the lock does not hold.
    let stranger = LockValue::random();
    let before = evalsha_calls(&admin).await;
    let answers = futures::future::join_all(keys.iter().zip(&values).enumerate().map(|(i, (key, value))| {
        let value = if i % 3 == 0 { &stranger } else { value };
        node.unlock(key, value.expose(), Announce::IfWaited)
    }))
    .await;
    let calls = evalsha_calls(&admin).await - before;
    assert!(calls < 20, "60 releases took {calls} script calls");
    for (i, released) in answers.into_iter().enumerate() {
        let held: Option<String> = admin.get(&keys[i]).await.unwrap();
        if i % 3 == 0 {
            assert!(!released.unwrap(), "u{i} was released with a stranger's value");
            assert_eq!(
                held.as_deref().and_then(|h| h.split('\n').next()),
                Some(values[i].expose())
            );
        } else {
            assert!(released.unwrap(), "u{i} was not released");
            assert_eq!(held, None);
        }
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

/// A small deterministic generator, so a failing case can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// Every key of a case with its value and its TTL to the nearest 5 s
/// (refusal marks live the TTL asked plus 10 s; the case's TTLs are 10 s
/// apart), the counter, and how many announcements the master sent.
async fn state(admin: &fred::prelude::Client, keys: &[String]) -> Vec<(String, Option<String>, i64)> {
    let mut seen = Vec::new();
    for key in keys.iter().map(String::as_str) {
        let mut value: Option<String> = admin.get(key).await.unwrap();
        // A lock key's third line is the master's clock (when it was
        // granted), which two masters do not share: the rest must match.
        if key.contains(":lock:") {
            value = value.map(|v| {
                v.split('\n')
                    .enumerate()
                    .filter(|(i, _)| *i != 2)
                    .map(|(_, l)| l)
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        let ttl: i64 = admin.pttl(key).await.unwrap();
        seen.push((key.to_owned(), value, if ttl > 0 { (ttl + 2_500) / 5_000 } else { ttl }));
    }
    let stats: String = admin.info(Some(fred::types::InfoKind::CommandStats)).await.unwrap();
    let published = stats
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_publish:calls="))
        .and_then(|rest| rest.split(',').next())
        .unwrap_or("0");
    seen.push(("announcements".into(), Some(published.to_owned()), 0));
    seen
}

/// A batch means what its requests mean one after the other (ROUND applies
/// them in the order they were asked for). Random batches of locks and
/// releases on three keys, with holders and refusal marks set beforehand,
/// run as one ROUND call on one master and as one call per request on
/// another; the replies, every key's value and TTL, the counter and the
/// number of announcements must agree, case after case.
#[tokio::test]
async fn a_batch_does_what_its_requests_do_one_by_one() {
    let cluster = Cluster::start(2);
    let batched = cluster.admin(0).await;
    let alone = cluster.admin(1).await;
    let mut run_ids = Vec::new();
    for admin in [&batched, &alone] {
        let info: String = admin.info(Some(fred::types::InfoKind::Server)).await.unwrap();
        run_ids.push(
            info.lines()
                .find_map(|l| l.strip_prefix("run_id:"))
                .unwrap()
                .trim()
                .to_owned(),
        );
    }
    let script = redlockd::redis::scripts::ROUND;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut grants = 0;
    for case in 0..300 {
        let locks: Vec<String> = (0..3).map(|j| support::keys::of(&format!("c{case}:{j}"))).collect();
        let marks: Vec<String> = (0..3)
            .map(|j| support::keys::beside(&format!("lock:c{case}:{j}"), "waiting:"))
            .collect();
        // Each lock's bucket: its counter (the same on both masters) and a
        // marker naming the running process.
        let fences: Vec<String> = (0..3)
            .map(|j| support::keys::fence(&format!("lock:c{case}:{j}")))
            .collect();
        let markers: Vec<String> = (0..3)
            .map(|j| support::keys::marker(&format!("lock:c{case}:{j}")))
            .collect();
        for (admin, run_id) in [&batched, &alone].into_iter().zip(&run_ids) {
            for j in 0..3 {
                let _: () = admin
                    .set(&markers[j], format!("{run_id}:replid"), None, None, false)
                    .await
                    .unwrap();
                let _: Option<String> = admin
                    .set(&fences[j], "1000", None, Some(fred::types::SetOptions::NX), false)
                    .await
                    .unwrap();
            }
        }
        for j in 0..3 {
            let holder = rng.pick(&["", "v0", "v1"]);
            let mark = rng.pick(&["", "t1", "t2", "*"]);
            for admin in [&batched, &alone] {
                for (key, value) in [(&locks[j], holder), (&marks[j], mark)] {
                    if !value.is_empty() {
                        let expire = Some(fred::types::Expiration::PX(60_000));
                        let _: () = admin.set(key, value, expire, None, false).await.unwrap();
                    }
                }
            }
        }
        let tag = rng.pick(&["t1", "t2"]);
        let requests: Vec<(usize, [&str; 4])> = (0..1 + rng.below(8))
            .map(|_| {
                let j = rng.below(3);
                let value = rng.pick(&["v0", "v1", "v2"]);
                let request = if rng.below(2) == 0 {
                    [
                        "L",
                        value,
                        rng.pick(&["20000", "30000"]),
                        rng.pick(&["d\nt\no1", "d\n\n"]),
                    ]
                } else {
                    ["U", value, rng.pick(&["", "waited", "always"]), ""]
                };
                (j, request)
            })
            .collect();
        let call = |admin: &fred::prelude::Client, requests: &[(usize, [&str; 4])]| {
            let mut keys = Vec::new();
            let mut args = vec![tag.to_owned(), "PUBLISH".to_owned(), "500".to_owned()];
            for (j, request) in requests {
                keys.extend([
                    locks[*j].clone(),
                    marks[*j].clone(),
                    fences[*j].clone(),
                    markers[*j].clone(),
                ]);
                args.extend(request.iter().map(|s| (*s).to_owned()));
            }
            let admin = admin.clone();
            async move { admin.eval::<Vec<i64>, _, _, _>(script, keys, args).await.unwrap() }
        };
        let together = call(&batched, &requests).await;
        let mut one_by_one = Vec::new();
        for request in &requests {
            one_by_one.extend(call(&alone, std::slice::from_ref(request)).await);
        }
        assert_eq!(together, one_by_one, "case {case}: replies to {requests:?} (tag {tag})");
        grants += together.iter().filter(|&&r| r > 0).count();
        let keys: Vec<String> = locks.iter().chain(&marks).chain(&fences).cloned().collect();
        assert_eq!(
            state(&batched, &keys).await,
            state(&alone, &keys).await,
            "case {case}: what {requests:?} (tag {tag}) left"
        );
    }
    // The cases covered the paths that matter, not only refusals.
    assert!(grants > 100, "only {grants} grants in 300 cases");
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
