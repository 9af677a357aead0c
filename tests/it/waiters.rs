//! Waiting against five real masters: first in, first out within a daemon,
//! woken across daemons by a published release, fair between two daemons,
//! nothing left behind by a cancelled waiter, and the waiter and session
//! limits.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use redlockd_client::proto::HoldEvent;
use support::hold::{hold, inspect};
use support::*;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;

#[tokio::test]
async fn waiters_in_one_daemon_are_served_first_in_first_out() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut holder = daemon.client().await;
    let first = must_acquire(&mut holder, "fifo", 30.0, 0.0).await;
    let (order_tx, mut order_rx) = mpsc::unbounded_channel();
    for (queued, name) in ["a", "b", "c", "d"].into_iter().enumerate() {
        let mut client = daemon.client().await;
        let order = order_tx.clone();
        tokio::spawn(async move {
            let lease = must_acquire(&mut client, "fifo", 30.0, 20.0).await;
            order.send(name).unwrap();
            assert!(release(&mut client, &lease).await);
        });
        // It joins the queue before the next one.
        daemon.until_waiters(queued + 1).await;
    }
    assert!(release(&mut holder, &first).await);
    let mut order = Vec::new();
    for _ in 0..4 {
        order.push(order_rx.recv().await.unwrap());
    }
    assert_eq!(order, ["a", "b", "c", "d"]);
    daemon.stop().await;
}

#[tokio::test]
async fn a_published_release_wakes_a_waiter_long_before_its_next_retry() {
    let cluster = Cluster::start(5);
    let mut env = test_env(&cluster);
    // Retries come 5 to 6 s apart: only a wake-up can beat a 3 s wait.
    env.insert("REDLOCKD__LOCK__RETRY_DELAY_MIN".into(), "5s".into());
    env.insert("REDLOCKD__LOCK__RETRY_DELAY_MAX".into(), "6s".into());
    let holder_daemon = Daemon::start_with(env.clone()).await;
    let waiter_daemon = Daemon::start_with(env).await;
    let mut holder = holder_daemon.client().await;
    let first = must_acquire(&mut holder, "wake", 30.0, 0.0).await;
    let mut waiter = waiter_daemon.client().await;
    let waiting = tokio::spawn(async move { try_acquire(&mut waiter, "wake", 30.0, 3.0).await });
    waiter_daemon.until_waiters(1).await;
    assert!(release(&mut holder, &first).await);
    let reply = waiting.await.unwrap();
    assert!(
        reply.acquired,
        "the waiter on the other daemon was not woken: {reply:?}"
    );
    holder_daemon.stop().await;
    waiter_daemon.stop().await;
}

/// Grants the two daemons share out before fairness is judged.
const CONTENDED_GRANTS: u32 = 100;

#[tokio::test]
async fn two_daemons_contending_for_many_rounds_both_make_progress() {
    let cluster = Cluster::start(5);
    let daemons = [Daemon::start(&cluster).await, Daemon::start(&cluster).await];
    // Counted from when both serve: a daemon starting on a busy machine
    // (its masters probed first) is not a daemon making no progress. Then
    // the pace of this machine now: the slowest of a few uncontended grants
    // and releases through each daemon.
    let mut round = Duration::ZERO;
    for daemon in &daemons {
        daemon.until_health(ServingStatus::Serving).await;
        let mut client = daemon.client().await;
        for _ in 0..3 {
            let start = tokio::time::Instant::now();
            let lease = must_acquire(&mut client, "pace", 5.0, 0.0).await;
            release(&mut client, &lease).await;
            round = round.max(start.elapsed());
        }
    }
    let total = Arc::new(AtomicU32::new(0));
    let mut tasks = Vec::new();
    for (d, daemon) in daemons.iter().enumerate() {
        for _ in 0..2 {
            let mut client = daemon.client().await;
            let total = total.clone();
            tasks.push(tokio::spawn(async move {
                let mut grants = 0;
                while total.load(Ordering::Relaxed) < CONTENDED_GRANTS {
                    let reply = try_acquire(&mut client, "contended", 5.0, 1.0).await;
                    if let Some(lease) = reply.lease {
                        grants += 1;
                        total.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        release(&mut client, &lease).await;
                    }
                }
                (d, grants)
            }));
        }
    }
    // However slow the machine, the grants must come at the pace of its
    // rounds: a hand-off is a release and a grant, a few rounds, so twenty
    // rounds a grant is ample, and grants that wait for locks to expire
    // (5 s TTL) are far slower.
    let budget = (Duration::from_millis(5) + round * 20) * CONTENDED_GRANTS;
    let progress = async {
        while total.load(Ordering::Relaxed) < CONTENDED_GRANTS {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let done = tokio::time::timeout(budget, progress).await;
    assert!(
        done.is_ok(),
        "{} of {CONTENDED_GRANTS} grants in {budget:?} (a round took {round:?})",
        total.load(Ordering::Relaxed)
    );
    let mut per_daemon = [0; 2];
    for task in tasks {
        let (d, grants) = task.await.unwrap();
        per_daemon[d] += grants;
    }
    println!("grants per daemon: {per_daemon:?}");
    // Both progress, and neither wins most hand-offs: Redis announces a
    // release to the daemons in subscription order, which must not decide.
    let total: u32 = per_daemon.iter().sum();
    assert!(
        per_daemon.iter().all(|g| *g * 5 >= total),
        "a daemon starved: {per_daemon:?}"
    );
    for daemon in daemons {
        daemon.stop().await;
    }
}

#[tokio::test]
async fn a_cancelled_waiter_leaves_the_queue_and_nothing_in_redis() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut holder = daemon.client().await;
    let first = must_acquire(&mut holder, "c", 30.0, 0.0).await;
    let mut waiter = daemon.client().await;
    let cancelled = tokio::time::timeout(Duration::from_millis(300), try_acquire(&mut waiter, "c", 30.0, 20.0)).await;
    assert!(cancelled.is_err(), "the waiter should still have been waiting");
    drop(waiter);
    daemon.until_waiters(0).await;
    assert!(release(&mut holder, &first).await);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let view = inspect(&mut holder, "c").await;
    assert_eq!(view.agreeing, 0, "the cancelled waiter took the lock: {view:?}");
    assert!(view.nodes.iter().all(|n| !n.held), "a key was left behind: {view:?}");
    // The queue is empty again: a new waiter is served at once.
    must_acquire(&mut holder, "c", 5.0, 1.0).await;
    daemon.stop().await;
}

#[tokio::test]
async fn waiter_and_session_limits_answer_resource_exhausted() {
    let cluster = Cluster::start(5);
    let mut env = test_env(&cluster);
    env.insert("REDLOCKD__LOCK__MAX_WAITERS_PER_RESOURCE".into(), "2".into());
    env.insert("REDLOCKD__LOCK__MAX_SESSIONS".into(), "1".into());
    let daemon = Daemon::start_with(env).await;
    let mut holder = daemon.client().await;
    let first = must_acquire(&mut holder, "l", 30.0, 0.0).await;
    let mut waiting = Vec::new();
    for _ in 0..2 {
        let mut client = daemon.client().await;
        waiting.push(tokio::spawn(async move {
            let reply = try_acquire(&mut client, "l", 30.0, 10.0).await;
            if let Some(lease) = &reply.lease {
                release(&mut client, lease).await;
            }
            reply
        }));
    }
    daemon.until_waiters(2).await;
    let mut third = daemon.client().await;
    let status = third.acquire(acquire_req("l", 30.0, 10.0)).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(
        status.message().contains("max_waiters_per_resource"),
        "{}",
        status.message()
    );
    // Another resource is still served.
    must_acquire(&mut third, "other", 5.0, 1.0).await;
    assert!(release(&mut holder, &first).await);
    for task in waiting {
        assert!(task.await.unwrap().acquired);
    }

    let mut one = hold(&mut daemon.client().await, "s1", 5.0, None).await;
    one.expect(HoldEvent::Acquired).await;
    let (_tx, requests) = mpsc::channel(1);
    let mut two = daemon.client().await;
    let status = match two.hold(ReceiverStream::new(requests)).await {
        Err(status) => status,
        Ok(mut stream) => stream.get_mut().message().await.unwrap_err(),
    };
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    daemon.stop().await;
}
