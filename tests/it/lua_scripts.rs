//! The Lua scripts against one real `redis-server`, one call at a time:
//! a re-sent lock, hand-offs and refusal marks, the marker that proves the
//! master's process, the fence, counters near 2^53, extend and unlock, the
//! reload after NOSCRIPT, and which releases are announced.

use crate::support;

use std::time::Duration;

use fred::prelude::{ClientLike, KeysInterface, LuaInterface};
use redlockd::redis::node::RedisNode;
use redlockd::redlock::{Announce, Extension, LockValue, Node, NodeError, Swap};
use support::Cluster;
use support::redis_node::{KEY, TTL, node, read};

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
    assert!(refused.is_unverified(), "{refused}");
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
    assert!(refused.is_unverified(), "{refused}");
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
        assert_eq!(refused, NodeError::CounterFull);
        assert_eq!(
            admin.get::<Option<String>, _>(support::keys::of("full")).await.unwrap(),
            None
        );
        assert_eq!(cluster.fence(0, "full").await, Some(full.to_string()));
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
