//! Hand-offs on in-memory nodes (see `engine_tests`): the holder swapped in
//! one round with a higher token, a waiter elsewhere reported, quorum and
//! failure, and a queue's head that waits for the hand-off or steps aside.

use std::future::pending;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use super::*;
use crate::redlock::engine::tests::{NODE_TIMEOUT, TTL, cluster, lease, once};
use crate::redlock::fake::{FakeNode, Fault};
use crate::redlock::node::{Announce, Standing};
use crate::redlock::*;

#[tokio::test(start_paused = true)]
async fn a_hand_off_swaps_the_holder_in_one_round_with_a_higher_token() {
    let (engine, nodes) = cluster(&[10, 20, 30, 40, 50]);
    let first = lease(once(&engine, "r").await);
    let handed = engine.hand_off("r", &first.value, TTL, "").await.unwrap();
    assert!(handed.old_held, "the first lock was held to the end");
    let second = handed.lease.expect("a quorum swapped the value");
    assert!(second.fencing_token > first.fencing_token);
    assert_ne!(second.value, first.value);
    let key = engine.lock_key("r");
    for node in &nodes {
        assert_eq!(
            node.holder(&key).as_deref(),
            Some(second.value.expose()),
            "{}",
            node.name()
        );
    }
    // The new holder releases as usual; the old value opens nothing.
    assert!(!engine.release("r", &first.value).await.unwrap());
    assert!(engine.release("r", &second.value).await.unwrap());
}

#[tokio::test(start_paused = true)]
async fn a_hand_off_reports_a_waiter_elsewhere_once_a_master_saw_its_mark() {
    let (engine, nodes) = cluster(&[0; 5]);
    let first = lease(once(&engine, "r").await);
    let handed = engine.hand_off("r", &first.value, TTL, "").await.unwrap();
    assert!(!handed.waited, "nobody else waits");
    // Another daemon's waiter was refused by one master.
    nodes[2].mark_waited_elsewhere(&engine.lock_key("r"));
    let second = handed.lease.unwrap();
    let handed = engine.hand_off("r", &second.value, TTL, "").await.unwrap();
    assert!(handed.waited, "the mark on master 2 was not reported");
    // An announcing release clears it.
    assert!(
        engine
            .release_announced("r", &handed.lease.unwrap().value, Announce::Always)
            .await
            .unwrap()
    );
    let third = lease(once(&engine, "r").await);
    assert!(!engine.hand_off("r", &third.value, TTL, "").await.unwrap().waited);
}

#[tokio::test(start_paused = true)]
async fn a_hand_off_is_decided_once_a_quorum_swapped() {
    let (engine, nodes) = cluster(&[0; 5]);
    let first = lease(once(&engine, "r").await);
    nodes[4].set_fault(Fault::Slow(NODE_TIMEOUT * 4 / 5));
    let started = Instant::now();
    let handed = engine.hand_off("r", &first.value, TTL, "").await.unwrap();
    assert!(started.elapsed() < NODE_TIMEOUT / 2, "waited for the slow master");
    assert!(handed.old_held, "a quorum held the old lock to the end");
    let second = handed.lease.expect("a quorum swapped the value");
    assert!(second.fencing_token > first.fencing_token);
    assert!(engine.release("r", &second.value).await.unwrap());
}

#[tokio::test(start_paused = true)]
async fn a_hand_off_of_an_expired_lock_still_grants_a_free_key_but_reports_it_lost() {
    let (engine, _) = cluster(&[0; 5]);
    let first = lease(once(&engine, "r").await);
    tokio::time::advance(TTL + Duration::from_secs(1)).await;
    let handed = engine.hand_off("r", &first.value, TTL, "").await.unwrap();
    assert!(!handed.old_held, "an expired lock was not held to the end");
    assert!(handed.lease.is_some(), "the key was free: the waiter gets it");
}

#[tokio::test(start_paused = true)]
async fn a_failed_hand_off_leaves_no_new_value_and_releases_the_old_one() {
    let (engine, nodes) = cluster(&[0; 5]);
    let first = lease(once(&engine, "r").await);
    let key = engine.lock_key("r");
    // Three masters now hold someone else's lock (the first one expired
    // there): the hand-off cannot reach a quorum.
    let stranger = LockValue::random();
    for node in &nodes[..3] {
        node.unlock(&key, first.value.expose(), Announce::No).await.unwrap();
        node.try_lock(&key, stranger.expose(), TTL, "").await.unwrap();
    }
    let handed = engine.hand_off("r", &first.value, TTL, "").await.unwrap();
    assert_eq!(handed.lease, None);
    assert!(!handed.old_held);
    for node in &nodes[..3] {
        assert_eq!(node.holder(&key).as_deref(), Some(stranger.expose()));
    }
    for node in &nodes[3..] {
        assert_eq!(node.holder(&key), None, "{} kept a value", node.name());
    }
}

#[tokio::test(start_paused = true)]
async fn a_hand_off_counts_only_usable_nodes_and_releases_on_the_others() {
    let (engine, nodes) = cluster(&[0; 5]);
    let first = lease(once(&engine, "r").await);
    for node in &nodes[..3] {
        node.set_standing(Standing::Quarantined {
            until: Instant::now() + Duration::from_secs(60),
            reason: "restarted".into(),
        });
    }
    let handed = engine.hand_off("r", &first.value, TTL, "").await.unwrap();
    assert_eq!(handed.lease, None, "two usable nodes are no quorum");
    assert!(handed.old_held);
    let key = engine.lock_key("r");
    assert!(nodes.iter().all(|n| n.holder(&key).is_none()));
}

/// `acquire` as the head of a local queue; the lease comes from `handed`.
async fn as_head(engine: &Engine<FakeNode>, held_here: bool, handed: oneshot::Receiver<Lease>) -> Lease {
    as_yielding_head(engine, held_here, handed, &|| None).await
}

/// `as_head`, stepping aside while `yielding` says so.
async fn as_yielding_head(
    engine: &Engine<FakeNode>,
    held_here: bool,
    handed: oneshot::Receiver<Lease>,
    yielding: &(dyn Fn() -> Option<Instant> + Sync),
) -> Lease {
    let wake = Notify::new();
    let head = Head {
        wake: &wake,
        handed: async { handed.await.expect("the hand-off was dropped") },
        held_here,
        yielding,
    };
    lease(
        engine
            .acquire(
                "r",
                (Kind::Exclusive, TTL),
                Duration::from_secs(5),
                pending(),
                Some(head),
                "",
            )
            .await,
    )
}

#[tokio::test(start_paused = true)]
async fn a_head_whose_lock_is_held_here_waits_for_the_hand_off_instead_of_trying() {
    let (engine, nodes) = cluster(&[0; 5]);
    let tries = || nodes.iter().map(FakeNode::tries).sum::<usize>();
    for held_here in [false, true] {
        let holder = lease(once(&engine, "r").await);
        let before = tries();
        let (to, from) = oneshot::channel();
        let handing = async {
            // Before any retry delay (100-300 ms) ends.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let handed = engine.hand_off("r", &holder.value, TTL, "").await.unwrap();
            assert!(handed.old_held);
            to.send(handed.lease.expect("handed over")).unwrap();
        };
        let (got, ()) = tokio::join!(as_head(&engine, held_here, from), handing);
        assert!(got.fencing_token > holder.fencing_token);
        // Without the hint the head tried at once, and every master refused.
        let expected = if held_here { 0 } else { 5 };
        assert_eq!(tries() - before, expected, "held_here = {held_here}");
        assert!(engine.release("r", &got.value).await.unwrap());
    }
}

#[tokio::test(start_paused = true)]
async fn a_head_that_steps_aside_makes_no_attempt_before_its_window_ends() {
    let (engine, nodes) = cluster(&[0; 5]);
    let tries = || nodes.iter().map(FakeNode::tries).sum::<usize>();
    let start = Instant::now();
    let until = Mutex::new(start + Duration::from_millis(80));
    let yielding = || {
        let until = *until.lock().unwrap();
        (Instant::now() < until).then_some(until)
    };
    let (_to, from) = oneshot::channel();
    let watching = async {
        // While the head waits, the window moves on (its release is through).
        tokio::time::sleep(Duration::from_millis(50)).await;
        *until.lock().unwrap() = start + Duration::from_millis(150);
        tokio::time::sleep(Duration::from_millis(99)).await;
        assert_eq!(tries(), 0, "an attempt started inside the window");
    };
    let (got, ()) = tokio::join!(as_yielding_head(&engine, false, from, &yielding), watching);
    assert_eq!(
        Instant::now() - start,
        Duration::from_millis(150),
        "granted by the first attempt after it"
    );
    assert_eq!(tries(), 5);
    assert!(engine.release("r", &got.value).await.unwrap());
}
