//! Engine tests on in-memory nodes with Tokio's clock paused: every duration
//! below is exact, and no test sleeps in real time.

use std::future::pending;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::join_all;
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use super::fake::{FakeNode, Fault};
use super::node::{Announce, Standing};
use super::*;

const TTL: Duration = Duration::from_secs(10);
const NODE_TIMEOUT: Duration = Duration::from_millis(50);

pub(super) fn config() -> EngineConfig {
    EngineConfig {
        key_prefix: "t".into(),
        node_timeout: NODE_TIMEOUT,
        drift_factor: 0.01,
        min_validity: Duration::from_millis(1),
        retry_delay_min: Duration::from_millis(100),
        retry_delay_max: Duration::from_millis(300),
        daemon_id: "test".into(),
        publish_round: true,
    }
}

fn cluster(counters: &[u64]) -> (std::sync::Arc<Engine<FakeNode>>, Vec<FakeNode>) {
    let nodes: Vec<FakeNode> = counters
        .iter()
        .enumerate()
        .map(|(i, c)| FakeNode::new(&format!("n{i}"), *c))
        .collect();
    (std::sync::Arc::new(Engine::new(nodes.clone(), config())), nodes)
}

async fn once(engine: &Engine<FakeNode>, resource: &str) -> Result<Acquired, Error> {
    engine
        .acquire(resource, (Kind::Exclusive, TTL), Duration::ZERO, pending(), ALONE, "")
        .await
}

fn lease(outcome: Result<Acquired, Error>) -> Lease {
    match outcome {
        Ok(Acquired::Granted(lease)) => lease,
        other => panic!("expected a grant, got {other:?}"),
    }
}

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
