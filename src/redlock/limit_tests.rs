//! `Limit` and `within` on a paused clock: exact on time, patient with a
//! daemon that was descheduled, and never more than twice the limit; and a
//! round of the engine that waits by one.

use std::time::Duration;

use tokio::time::Instant;

use super::*;
use crate::redlock::engine::tests::{TTL, cluster, lease, once};
use crate::redlock::fake::Fault;
use crate::redlock::fake_state::relayed;

const LIMIT: Duration = Duration::from_millis(50);

/// Lets every task that can run do so (the clock stays where it is).
pub(crate) async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_limit_on_time_is_exact() {
    let start = Instant::now();
    assert_eq!(within(LIMIT, std::future::pending::<()>()).await, Err(TimedOut));
    assert_eq!(start.elapsed(), LIMIT);
    assert_eq!(within(LIMIT, relayed(LIMIT / 2, 7)).await, Ok(Ok(7)));
    assert_eq!(start.elapsed(), LIMIT + LIMIT / 2);
}

/// The daemon descheduled for 200 ms while it waited: the answer came at
/// 10 ms, and the timer fires 150 ms late, before the answer has made its
/// way through the daemon's tasks. It is read, not taken for a timeout
/// (`tokio::time::timeout` in its place loses it).
#[tokio::test(start_paused = true)]
async fn an_answer_that_came_while_the_daemon_could_not_run_is_read() {
    let waiting = tokio::spawn(within(LIMIT, relayed(Duration::from_millis(10), 7)));
    settle().await;
    tokio::time::advance(Duration::from_millis(200)).await;
    assert_eq!(waiting.await.unwrap(), Ok(Ok(7)));
}

/// Lateness after lateness, nothing answering: the wait still ends, within
/// twice its limit of the daemon's time.
#[tokio::test(start_paused = true)]
async fn a_wait_is_made_longer_for_lateness_at_most_by_its_limit() {
    let start = Instant::now();
    let waiting = tokio::spawn(within(LIMIT, std::future::pending::<()>()));
    settle().await;
    for _ in 0..3 {
        tokio::time::advance(Duration::from_millis(70)).await;
        settle().await;
    }
    assert!(waiting.is_finished(), "still waiting after {:?}", start.elapsed());
    assert_eq!(waiting.await.unwrap(), Err(TimedOut));
    // At 70 ms 20 late: again, to 90; at 140 ms 50 late: again for the 30
    // left of its credit (the limit), to 170; at 210 ms: over.
    assert!(start.elapsed() <= Duration::from_millis(210), "{:?}", start.elapsed());
}

/// Round 1 while the daemon was descheduled for 200 ms: every master
/// answered at 10 ms, and the round's timer fires 150 ms late, before the
/// answers have come through the daemon's tasks. The lock is granted (not
/// five masters timed out), its validity counted from the real time the
/// round took.
#[tokio::test(start_paused = true)]
async fn a_round_whose_answers_came_while_the_daemon_could_not_run_grants() {
    let (engine, nodes) = cluster(&[0; 5]);
    for node in &nodes {
        node.set_fault(Fault::Relayed(Duration::from_millis(10)));
    }
    let start = Instant::now();
    let acquiring = tokio::spawn(async move { once(&engine, "r").await });
    settle().await;
    tokio::time::advance(Duration::from_millis(200)).await;
    let lease = lease(acquiring.await.unwrap());
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    // validity = ttl - elapsed - (ttl * 0.01 + 2 ms)
    assert_eq!(lease.validity, TTL - Duration::from_millis(200 + 102));
}
