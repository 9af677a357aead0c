//! Acquiring on in-memory nodes (see `engine_tests`): the quorum, what slow
//! and failing nodes cost, the validity, the cleanup of a failed attempt,
//! round two of the fencing token, waiting and giving up, and quarantine.

use std::future::pending;
use std::time::Duration;

use tokio::time::Instant;

use super::*;
use crate::redlock::engine::tests::{NODE_TIMEOUT, TTL, cluster, config, lease, once};
use crate::redlock::fake::{FakeNode, Fault};
use crate::redlock::node::Standing;
use crate::redlock::*;

#[tokio::test(start_paused = true)]
async fn two_of_five_failing_nodes_still_grant() {
    let (engine, nodes) = cluster(&[0; 5]);
    nodes[0].set_fault(Fault::Down);
    nodes[4].set_fault(Fault::Slow(Duration::from_secs(60)));
    let lease = lease(once(&engine, "r").await);
    let key = engine.lock_key("r");
    let holders = nodes.iter().filter(|n| n.holder(&key).is_some()).count();
    assert_eq!(holders, 3);
    assert!(lease.validity > Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn three_failing_nodes_make_the_cluster_unavailable() {
    let (engine, nodes) = cluster(&[0; 5]);
    for node in &nodes[..3] {
        node.set_fault(Fault::Down);
    }
    let outcome = once(&engine, "r").await;
    match outcome {
        Err(Error::Unavailable {
            reached,
            needed,
            detail,
            votes,
        }) => {
            assert_eq!((reached, needed), (2, 3));
            assert_eq!(detail, "3 errored, 2 granted");
            let kinds: Vec<&str> = votes.iter().map(NodeVote::kind).collect();
            assert_eq!(kinds, ["errored", "errored", "errored", "granted", "granted"]);
        }
        other => panic!("expected unavailable, got {other:?}"),
    }
    let key = engine.lock_key("r");
    assert!(
        nodes.iter().all(|n| n.holder(&key).is_none()),
        "a failed attempt left a key"
    );
}

#[tokio::test(start_paused = true)]
async fn a_lock_held_on_a_majority_is_contention_not_unavailability() {
    let (engine, _) = cluster(&[0; 5]);
    lease(once(&engine, "r").await);
    let outcome = once(&engine, "r").await;
    assert_eq!(
        outcome,
        Ok(Acquired::NotGranted {
            reason: FailureReason::Taken,
            attempts: 1,
            votes: vec![NodeVote::Taken; 5],
        })
    );
}

#[tokio::test(start_paused = true)]
async fn a_slow_minority_costs_nothing_once_a_quorum_granted() {
    let (engine, nodes) = cluster(&[0; 5]);
    nodes[2].set_fault(Fault::Slow(Duration::from_secs(3600)));
    nodes[4].set_fault(Fault::Slow(Duration::from_secs(3600)));
    let start = Instant::now();
    let lease = lease(once(&engine, "r").await);
    assert_eq!(start.elapsed(), Duration::ZERO, "the round waited for the slow nodes");
    // validity = ttl - elapsed - (ttl * 0.01 + 2 ms)
    assert_eq!(lease.validity, TTL - Duration::from_millis(102));
}

#[tokio::test(start_paused = true)]
async fn a_slow_node_the_quorum_needs_costs_at_most_the_per_node_timeout() {
    let (engine, nodes) = cluster(&[0; 5]);
    nodes[0].set_fault(Fault::Down);
    nodes[1].set_fault(Fault::Down);
    nodes[2].set_fault(Fault::Slow(Duration::from_secs(3600)));
    let start = Instant::now();
    let outcome = once(&engine, "r").await;
    // The round's one timer ends the wait: the node it cut off timed out.
    match outcome {
        Err(Error::Unavailable { reached: 2, votes, .. }) => {
            let kinds: Vec<&str> = votes.iter().map(NodeVote::kind).collect();
            assert_eq!(kinds, ["errored", "errored", "timed out", "granted", "granted"]);
        }
        other => panic!("expected unavailable, got {other:?}"),
    }
    // Round 1, then the release to all: each waits at most node_timeout.
    assert_eq!(start.elapsed(), NODE_TIMEOUT * 2);
}

#[tokio::test(start_paused = true)]
async fn validity_accounts_for_the_time_the_rounds_took() {
    let (engine, nodes) = cluster(&[0; 5]);
    for node in &nodes {
        node.set_fault(Fault::Slow(Duration::from_millis(30)));
    }
    let lease = lease(once(&engine, "r").await);
    assert_eq!(lease.validity, TTL - Duration::from_millis(30 + 102));
}

/// A round decided in the very poll in which its one timer ran out: the
/// nodes it leaves out timed out (their per-node metrics count them as
/// failed), they were not merely "not awaited".
#[tokio::test(start_paused = true)]
async fn nodes_left_out_when_the_limit_ran_out_timed_out() {
    let (engine, nodes) = cluster(&[0; 5]);
    for node in &nodes[..3] {
        node.set_fault(Fault::Slow(NODE_TIMEOUT));
    }
    for node in &nodes[3..] {
        node.set_fault(Fault::Slow(Duration::from_secs(3600)));
    }
    // Granted by three at the limit, but the TTL is used up by then, so
    // the attempt fails and says what each node did.
    let ttl = NODE_TIMEOUT + Duration::from_millis(2);
    let outcome = engine
        .acquire("r", (Kind::Exclusive, ttl), Duration::ZERO, pending(), ALONE, "")
        .await;
    let Ok(Acquired::NotGranted { votes, .. }) = outcome else {
        panic!("expected a failed attempt, got {outcome:?}");
    };
    let kinds: Vec<&str> = votes.iter().map(NodeVote::kind).collect();
    assert_eq!(kinds, ["granted", "granted", "granted", "timed out", "timed out"]);
}

#[tokio::test(start_paused = true)]
async fn rounds_that_eat_the_ttl_leave_no_validity_and_no_keys() {
    let (engine, nodes) = cluster(&[0; 5]);
    for node in &nodes {
        node.set_fault(Fault::Slow(Duration::from_millis(45)));
    }
    let ttl = Duration::from_millis(40);
    let outcome = engine
        .acquire("r", (Kind::Exclusive, ttl), Duration::ZERO, pending(), ALONE, "")
        .await;
    let Ok(Acquired::NotGranted {
        reason: FailureReason::ValidityUsedUp { left: Duration::ZERO },
        attempts: 1,
        votes,
    }) = outcome
    else {
        panic!("expected validity used up, got {outcome:?}");
    };
    let granted = votes.iter().filter(|v| **v == NodeVote::Granted(1)).count();
    assert!(granted >= 3, "{votes:?}");
    assert!(
        votes
            .iter()
            .all(|v| matches!(v, NodeVote::Granted(1) | NodeVote::NotAwaited))
    );
    for node in &nodes {
        node.set_fault(Fault::None);
    }
    assert!(nodes.iter().all(|n| n.holder(&engine.lock_key("r")).is_none()));
}

#[tokio::test(start_paused = true)]
async fn an_attempt_every_node_refused_sends_no_cleanup() {
    let (engine, nodes) = cluster(&[0; 5]);
    let holder = lease(once(&engine, "r").await);
    let outcome = once(&engine, "r").await;
    assert!(matches!(outcome, Ok(Acquired::NotGranted { .. })), "{outcome:?}");
    assert!(
        nodes.iter().all(|n| n.unlocks() == 0),
        "a refused attempt sent releases"
    );
    assert!(engine.release("r", &holder.value).await.unwrap());
    assert!(nodes.iter().all(|n| n.unlocks() == 1));
}

#[tokio::test(start_paused = true)]
async fn a_failed_attempt_releases_on_every_node_that_may_hold_it_even_one_whose_reply_was_lost() {
    let (engine, nodes) = cluster(&[0; 5]);
    let key = engine.lock_key("r");
    let other = LockValue::random();
    for node in &nodes[..2] {
        node.try_lock(&key, other.expose(), TTL, "").await.unwrap();
    }
    // Node 2 applies our SET but its reply never comes back.
    nodes[2].set_fault(Fault::LoseReplies);
    let outcome = once(&engine, "r").await;
    assert!(matches!(outcome, Ok(Acquired::NotGranted { .. })), "{outcome:?}");
    for node in &nodes[2..] {
        assert_eq!(node.unlocks(), 1, "{} was not sent a release", node.name());
    }
    // Nodes 0 and 1 answered "held by another owner": nothing to clean.
    for node in &nodes[..2] {
        assert_eq!(node.unlocks(), 0, "{} was sent a needless release", node.name());
    }
    nodes[2].set_fault(Fault::None);
    for node in &nodes[2..] {
        assert_eq!(node.holder(&key), None, "{} still holds our key", node.name());
    }
    assert_eq!(nodes[0].holder(&key).as_deref(), Some(other.expose()));
}

/// Grants `resource` with exactly the nodes in `quorum` up, then releases.
async fn grant_on(engine: &Engine<FakeNode>, nodes: &[FakeNode], quorum: &[usize]) -> u64 {
    for (i, node) in nodes.iter().enumerate() {
        node.set_fault(if quorum.contains(&i) { Fault::None } else { Fault::Down });
    }
    let lease = lease(once(engine, "r").await);
    for node in nodes {
        node.set_fault(Fault::None);
    }
    assert!(engine.release("r", &lease.value).await.unwrap());
    lease.fencing_token
}

/// The schedule of docs/design.md#the-fencing-token under which the per-node maximum goes down.
async fn adversarial_schedule(publish_round: bool) -> Vec<u64> {
    let nodes: Vec<FakeNode> = (0..5).map(|i| FakeNode::new(&format!("n{i}"), 0)).collect();
    let engine = Engine::new(
        nodes.clone(),
        EngineConfig {
            publish_round,
            ..config()
        },
    );
    let (a, b, c, d, e) = (0, 1, 2, 3, 4);
    let mut tokens = Vec::new();
    for quorum in [[a, b, c], [c, d, e], [a, b, c], [c, d, e], [a, b, d]] {
        tokens.push(grant_on(&engine, &nodes, &quorum).await);
    }
    tokens
}

#[tokio::test(start_paused = true)]
async fn with_round_two_tokens_strictly_increase_under_the_adversarial_schedule() {
    let tokens = adversarial_schedule(true).await;
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
}

#[tokio::test(start_paused = true)]
async fn without_round_two_the_same_schedule_makes_a_token_go_down() {
    // The control: this proves the test above can fail.
    let tokens = adversarial_schedule(false).await;
    assert_eq!(tokens, vec![16, 2 * 16 + 2, 3 * 16 + 2, 4 * 16 + 2, 3 * 16]);
    assert!(tokens[4] < tokens[3]);
}

#[tokio::test(start_paused = true)]
async fn round_two_is_skipped_when_a_majority_returned_the_max() {
    let (engine, nodes) = cluster(&[5, 5, 5, 3, 3]);
    let lease = lease(once(&engine, "r").await);
    assert_eq!(lease.fencing_token, 6 * 16);
    // Nodes 3 and 4 kept their own counters: nothing was published to them.
    assert_eq!(nodes[3].counter(), Some(4));
    assert_eq!(nodes[4].counter(), Some(4));
}

#[tokio::test(start_paused = true)]
async fn round_two_raises_the_holders_that_lag_when_the_max_is_a_minority() {
    let (engine, nodes) = cluster(&[5, 5, 3, 3, 3]);
    let lease = lease(once(&engine, "r").await);
    assert_eq!(lease.fencing_token, 6 * 16);
    for node in &nodes {
        assert_eq!(node.counter(), Some(6), "{} was not raised", node.name());
    }
}

#[tokio::test(start_paused = true)]
async fn a_waiter_gets_the_lock_soon_after_the_holder_releases() {
    let (engine, _) = cluster(&[0; 5]);
    let first = lease(once(&engine, "r").await);
    let waiter = {
        let engine = engine.clone();
        tokio::spawn(async move {
            engine
                .acquire(
                    "r",
                    (Kind::Exclusive, TTL),
                    Duration::from_secs(5),
                    pending(),
                    ALONE,
                    "",
                )
                .await
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let released_at = Instant::now();
    assert!(engine.release("r", &first.value).await.unwrap());
    let second = lease(waiter.await.unwrap());
    // The next retry comes at most retry_delay_max after the release.
    assert!(released_at.elapsed() <= config().retry_delay_max + 2 * NODE_TIMEOUT);
    assert!(second.fencing_token > first.fencing_token);
}

#[tokio::test(start_paused = true)]
async fn a_wait_that_runs_out_reports_contention_and_the_attempts_made() {
    let (engine, _) = cluster(&[0; 5]);
    lease(once(&engine, "r").await);
    let outcome = engine
        .acquire(
            "r",
            (Kind::Exclusive, TTL),
            Duration::from_secs(1),
            pending(),
            ALONE,
            "",
        )
        .await;
    match outcome {
        Ok(Acquired::NotGranted { reason, attempts, .. }) => {
            assert_eq!(reason, FailureReason::Taken);
            assert!((4..=11).contains(&attempts), "{attempts} attempts in 1 s");
        }
        other => panic!("expected contention, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn give_up_stops_the_wait_and_leaves_nothing_held() {
    let (engine, nodes) = cluster(&[0; 5]);
    let first = lease(once(&engine, "r").await);
    let give_up = tokio::time::sleep(Duration::from_millis(500));
    let outcome = engine
        .acquire("r", (Kind::Exclusive, TTL), Duration::from_secs(30), give_up, ALONE, "")
        .await;
    assert_eq!(outcome, Err(Error::Cancelled));
    let key = engine.lock_key("r");
    assert!(
        nodes
            .iter()
            .all(|n| n.holder(&key).as_deref() == Some(first.value.expose()))
    );
}

#[tokio::test(start_paused = true)]
async fn quarantined_nodes_do_not_count_towards_an_acquire_quorum() {
    let (engine, nodes) = cluster(&[0; 5]);
    let until = Instant::now() + Duration::from_secs(60);
    for node in &nodes[..2] {
        node.set_standing(Standing::Quarantined {
            until,
            reason: "restarted".into(),
        });
    }
    let lease = lease(once(&engine, "r").await);
    let key = engine.lock_key("r");
    // Not even asked: a quarantined node holds nothing.
    assert!(nodes[..2].iter().all(|n| n.holder(&key).is_none()));
    // Release still goes to every node.
    assert!(engine.release("r", &lease.value).await.unwrap());
    assert!(nodes.iter().all(|n| n.unlocks() == 1));

    nodes[2].set_standing(Standing::Failed {
        check: crate::redlock::standing::Check::EvictionPolicy,
        reason: "maxmemory-policy".into(),
    });
    match once(&engine, "r").await {
        Err(Error::Unavailable { reached, detail, .. }) => {
            assert_eq!(reached, 2);
            assert_eq!(detail, "2 quarantined, 1 unusable, 2 granted");
        }
        other => panic!("expected unavailable, got {other:?}"),
    }
}
