//! Releasing on in-memory nodes (see `engine_tests`): only the holder's
//! value releases, answered at quorum while slow nodes still delete, and
//! "not held" or unavailable only once a quorum is ruled out.

use std::time::Duration;

use tokio::time::Instant;

use super::*;
use crate::redlock::engine::tests::{NODE_TIMEOUT, cluster, lease, once};
use crate::redlock::fake::Fault;
use crate::redlock::node::Announce;

#[tokio::test(start_paused = true)]
async fn release_with_a_wrong_value_is_refused_and_the_lock_stays() {
    let (engine, nodes) = cluster(&[0; 5]);
    let lease = lease(once(&engine, "r").await);
    assert!(!engine.release("r", &LockValue::random()).await.unwrap());
    let key = engine.lock_key("r");
    assert!(
        nodes
            .iter()
            .all(|n| n.holder(&key).as_deref() == Some(lease.value.expose()))
    );
    assert!(engine.release("r", &lease.value).await.unwrap());
    assert!(nodes.iter().all(|n| n.holder(&key).is_none()));
}

#[tokio::test(start_paused = true)]
async fn a_release_is_answered_at_quorum_and_the_slow_nodes_still_delete_the_lock() {
    let (engine, nodes) = cluster(&[0; 5]);
    let lease = lease(once(&engine, "r").await);
    let key = engine.lock_key("r");
    let slow = Duration::from_secs(5);
    for node in &nodes[3..] {
        node.set_fault(Fault::Slow(slow));
    }
    let asked = Instant::now();
    assert!(engine.release("r", &lease.value).await.unwrap());
    // Three nodes answered at once: the answer did not wait for the other
    // two (nor for the node timeout).
    assert!(asked.elapsed() < NODE_TIMEOUT, "answered after {:?}", asked.elapsed());
    assert!(nodes[3..].iter().all(|n| n.holder(&key).is_some()));
    // Their deletes were not dropped with the answer (TTL is 10 s).
    tokio::time::sleep(slow + Duration::from_millis(1)).await;
    assert!(nodes.iter().all(|n| n.holder(&key).is_none()));
}

#[tokio::test(start_paused = true)]
async fn a_release_a_quorum_refuses_is_answered_without_the_slow_nodes() {
    let (engine, nodes) = cluster(&[0; 5]);
    let lease = lease(once(&engine, "r").await);
    for node in &nodes[3..] {
        node.set_fault(Fault::Slow(Duration::from_secs(5)));
    }
    let asked = Instant::now();
    assert!(!engine.release("r", &LockValue::random()).await.unwrap());
    assert!(asked.elapsed() < NODE_TIMEOUT, "answered after {:?}", asked.elapsed());
    tokio::time::sleep(Duration::from_secs(6)).await;
    let key = engine.lock_key("r");
    assert!(
        nodes
            .iter()
            .all(|n| n.holder(&key).as_deref() == Some(lease.value.expose()))
    );
}

#[tokio::test(start_paused = true)]
async fn a_release_waits_for_a_quorum_of_answers_before_saying_not_held() {
    // Four nodes (quorum 3): two "not held" at once rule out a quorum of
    // "held", but only two nodes answered: the answer waits for the two
    // slower ones (within the node timeout) rather than failing with
    // "unavailable".
    let (engine, nodes) = cluster(&[0; 4]);
    lease(once(&engine, "r").await);
    for node in &nodes[2..] {
        node.set_fault(Fault::Slow(NODE_TIMEOUT / 2));
    }
    assert_eq!(engine.release("r", &LockValue::random()).await, Ok(false));
}

#[tokio::test(start_paused = true)]
async fn a_release_counts_a_failed_node_towards_ruling_out_a_quorum() {
    // One node holds the lock, two do not, one fails at once, one is slow:
    // "held" can reach two at most, and four answered.
    let (engine, nodes) = cluster(&[0; 5]);
    let lease = lease(once(&engine, "r").await);
    let key = engine.lock_key("r");
    for node in &nodes[1..3] {
        assert!(node.unlock(&key, lease.value.expose(), Announce::No).await.unwrap());
    }
    nodes[0].set_fault(Fault::Down);
    nodes[4].set_fault(Fault::Slow(Duration::from_secs(5)));
    let asked = Instant::now();
    assert_eq!(engine.release("r", &lease.value).await, Ok(false));
    assert!(asked.elapsed() < NODE_TIMEOUT, "answered after {:?}", asked.elapsed());
}

#[tokio::test(start_paused = true)]
async fn a_release_that_too_many_nodes_fail_is_unavailable_at_once() {
    let (engine, nodes) = cluster(&[0; 5]);
    let lease = lease(once(&engine, "r").await);
    for node in &nodes[..3] {
        node.set_fault(Fault::Down);
    }
    for node in &nodes[3..] {
        node.set_fault(Fault::Slow(Duration::from_secs(5)));
    }
    let asked = Instant::now();
    let outcome = engine.release("r", &lease.value).await;
    assert!(matches!(outcome, Err(Error::Unavailable { .. })), "{outcome:?}");
    assert!(asked.elapsed() < NODE_TIMEOUT, "answered after {:?}", asked.elapsed());
}
