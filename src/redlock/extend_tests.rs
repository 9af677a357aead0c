//! Extending on in-memory nodes (see `engine_tests`): the lock kept and
//! refused after expiry, extensions batched per node with an answer each,
//! and a quarantined node still extended.

use std::future::pending;
use std::time::Duration;

use futures::future::join_all;
use tokio::time::Instant;

use super::*;
use crate::redlock::engine::tests::{NODE_TIMEOUT, TTL, cluster, lease, once};
use crate::redlock::fake::Fault;
use crate::redlock::node::Standing;
use crate::redlock::*;

#[tokio::test(start_paused = true)]
async fn extend_keeps_the_lock_and_is_refused_after_expiry() {
    let (engine, _) = cluster(&[0; 5]);
    let ttl = Duration::from_secs(1);
    let lease = lease(
        engine
            .acquire("r", (Kind::Exclusive, ttl), Duration::ZERO, pending(), ALONE, "")
            .await,
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    let validity = engine.extend("r", &lease.value, ttl).await.unwrap();
    assert_eq!(validity, Some(ttl - Duration::from_millis(12)));
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(engine.extend("r", &lease.value, ttl).await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(1001)).await;
    assert_eq!(engine.extend("r", &lease.value, ttl).await.unwrap(), None);
}

#[tokio::test(start_paused = true)]
async fn extensions_due_together_share_one_call_per_node_and_each_gets_its_own_answer() {
    let (engine, nodes) = cluster(&[0; 5]);
    let mut held = Vec::new();
    for i in 0..40 {
        held.push((format!("r{i}"), lease(once(&engine, &format!("r{i}")).await)));
    }
    // Every fourth lock was released (lost to its holder); one key is
    // taken over on a majority by another value.
    for (name, lease) in held.iter().step_by(4) {
        assert!(engine.release(name, &lease.value).await.unwrap());
    }
    let stolen = LockValue::random();
    let r1 = engine.lock_key("r1");
    for node in &nodes[..3] {
        node.extend(&[Extension {
            key: &r1,
            value: held[1].1.value.expose(),
            ttl: Duration::ZERO,
        }])
        .await
        .unwrap();
        node.try_lock(&r1, stolen.expose(), TTL, "").await.unwrap().unwrap();
    }
    let answers = join_all(held.iter().map(|(name, lease)| engine.extend(name, &lease.value, TTL))).await;
    for (i, answer) in answers.into_iter().enumerate() {
        let expected = i % 4 != 0 && i != 1;
        assert_eq!(answer.unwrap().is_some(), expected, "r{i}");
    }
    // 40 extensions due at once: a few script calls per node, not 40.
    for node in &nodes {
        assert!(
            (1..=EXTEND_BATCHES_AT_ONCE).contains(&node.extend_calls()),
            "{} calls for 40 extensions",
            node.extend_calls()
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_lost_lock_does_not_make_its_batch_wait_for_slow_nodes() {
    let (engine, nodes) = cluster(&[0; 5]);
    let kept = lease(once(&engine, "kept").await);
    let gone = lease(once(&engine, "gone").await);
    assert!(engine.release("gone", &gone.value).await.unwrap());
    // Two nodes answer just within the node timeout; the other three at once.
    for node in &nodes[3..] {
        node.set_fault(Fault::Slow(Duration::from_millis(40)));
    }
    let started = Instant::now();
    let (kept_answer, gone_answer) = tokio::join!(
        engine.extend("kept", &kept.value, TTL),
        engine.extend("gone", &gone.value, TTL)
    );
    // Both are decided by the fast three: a quorum extended "kept", and
    // more nodes than can be spared refused "gone".
    assert_eq!(started.elapsed(), Duration::ZERO);
    // No time passed: the validity is the TTL less the drift allowance.
    assert_eq!(kept_answer.unwrap(), quorum::validity(TTL, Duration::ZERO, 0.01));
    assert_eq!(gone_answer.unwrap(), None);
    assert_eq!(nodes[0].extend_calls(), 1, "one batch");
}

#[tokio::test(start_paused = true)]
async fn an_extension_that_waited_a_node_timeout_for_a_batch_is_not_sent() {
    let (engine, nodes) = cluster(&[0; 5]);
    let held = lease(once(&engine, "r").await);
    // Every node answers too late: each batch ends at the node timeout.
    for node in &nodes {
        node.set_fault(Fault::Slow(NODE_TIMEOUT * 2));
    }
    // More than the batches in flight can carry at once.
    let count = EXTEND_BATCH_MAX * EXTEND_BATCHES_AT_ONCE + 10;
    let answers = join_all((0..count).map(|_| engine.extend("r", &held.value, TTL))).await;
    let overloaded = answers
        .iter()
        .filter(|a| matches!(a, Err(Error::Unavailable { detail, .. }) if detail.contains("waited")))
        .count();
    assert_eq!(overloaded, 10, "the last ten waited a node timeout and were not sent");
    assert!(answers.iter().all(Result::is_err), "no quorum answered in time");
    assert_eq!(nodes[0].extend_calls(), EXTEND_BATCHES_AT_ONCE);
}

#[tokio::test(start_paused = true)]
async fn a_lock_named_twice_in_a_batch_is_extended_to_the_shorter_ttl_for_both() {
    let (engine, nodes) = cluster(&[0; 5]);
    let held = lease(once(&engine, "r").await);
    let short = Duration::from_secs(2);
    let (long_answer, short_answer) = tokio::join!(
        engine.extend("r", &held.value, TTL),
        engine.extend("r", &held.value, short)
    );
    let expected = quorum::validity(short, Duration::ZERO, 0.01);
    assert_eq!((long_answer.unwrap(), short_answer.unwrap()), (expected, expected));
    tokio::time::sleep(short).await;
    assert_eq!(
        nodes[0].holder(&engine.lock_key("r")),
        None,
        "the key lives for the shorter TTL"
    );
}

#[tokio::test(start_paused = true)]
async fn an_extension_whose_caller_gave_up_leaves_the_others_answered() {
    let (engine, nodes) = cluster(&[0; 5]);
    for node in &nodes {
        node.set_fault(Fault::Slow(Duration::from_millis(5)));
    }
    let first = lease(once(&engine, "a").await);
    let second = lease(once(&engine, "b").await);
    let mut given_up = Box::pin(engine.extend("a", &first.value, TTL));
    assert!(futures::poll!(&mut given_up).is_pending());
    drop(given_up);
    assert!(engine.extend("b", &second.value, TTL).await.unwrap().is_some());
    // The batch the first caller left still ran: both keys were extended.
    tokio::time::sleep(TTL - Duration::from_millis(500)).await;
    assert!(nodes[0].holder(&engine.lock_key("a")).is_some() && nodes[0].holder(&engine.lock_key("b")).is_some());
}

#[tokio::test(start_paused = true)]
async fn extend_still_reaches_a_quarantined_node() {
    let (engine, nodes) = cluster(&[0; 5]);
    let lease = lease(once(&engine, "r").await);
    nodes[0].set_standing(Standing::Quarantined {
        until: Instant::now() + Duration::from_secs(60),
        reason: "clock jump".into(),
    });
    tokio::time::sleep(Duration::from_secs(9)).await;
    assert!(engine.extend("r", &lease.value, TTL).await.unwrap().is_some());
    tokio::time::sleep(Duration::from_secs(5)).await;
    // Node 0 was extended too: it still holds the key past the first TTL.
    assert_eq!(
        nodes[0].holder(&engine.lock_key("r")).as_deref(),
        Some(lease.value.expose())
    );
}
