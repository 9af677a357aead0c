//! Hand-offs against five real masters (docs/design.md): a release hands
//! the lock to each local waiter in turn while nobody else waits, a waiter
//! on another daemon still gets its turn, and with hand-offs off every
//! release is published.

use crate::support;

use std::collections::HashMap;
use std::time::Duration;

use support::hold::inspect;
use support::*;
use tokio::sync::mpsc;

/// The value of the counter `series` (with its labels) in a scrape.
fn counter(scrape: &str, series: &str) -> u64 {
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0)
}

/// Settings for the hand-off tests: retries `retry` s apart (slow: waiters
/// are served by hand-offs and wake-ups), at most 4 hand-offs in a row.
fn handoff_env(cluster: &Cluster, retry: (&str, &str)) -> HashMap<String, String> {
    let mut env = test_env(cluster);
    env.insert("REDLOCKD__LOCK__RETRY_DELAY_MIN".into(), retry.0.into());
    env.insert("REDLOCKD__LOCK__RETRY_DELAY_MAX".into(), retry.1.into());
    env.insert("REDLOCKD__LOCK__MAX_HANDOFFS_IN_ROW".into(), "4".into());
    env
}

/// Queues `n` waiters for `resource` on `daemon`, each holding the lock
/// for 100 ms once granted; they report `(index, token)` in grant order.
async fn queue_waiters(daemon: &Daemon, resource: &'static str, n: usize) -> mpsc::UnboundedReceiver<(usize, u64)> {
    let (grants_tx, grants) = mpsc::unbounded_channel();
    for i in 0..n {
        let mut client = daemon.client().await;
        let grants = grants_tx.clone();
        tokio::spawn(async move {
            let lease = must_acquire(&mut client, resource, 30.0, 20.0).await;
            grants.send((i, lease.fencing_token)).unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(release(&mut client, &lease).await, "held to the end");
        });
        daemon.until_waiters(i + 1).await;
    }
    grants
}

/// Receives `n` grants; checks they come first in, first out, with rising
/// tokens after `after`; returns the tokens.
async fn in_order(grants: &mut mpsc::UnboundedReceiver<(usize, u64)>, n: usize, after: u64) -> Vec<u64> {
    let mut order = Vec::new();
    let mut tokens = Vec::new();
    let mut last = after;
    for _ in 0..n {
        let (i, token) = tokio::time::timeout(Duration::from_secs(4), grants.recv())
            .await
            .expect("a waiter was left waiting for a retry")
            .unwrap();
        assert!(token > last, "token {token} after {last}");
        last = token;
        order.push(i);
        tokens.push(token);
    }
    assert_eq!(order, (0..n).collect::<Vec<_>>(), "first in, first out");
    tokens
}

/// Once `daemon` counted seven successful releases (the last waiter lets go
/// 100 ms after its grant), checks that `handed` of them were hand-offs;
/// returns the scrape.
async fn hand_offs_after_seven_releases(daemon: &Daemon, handed: u64) -> String {
    let scrape = daemon
        .scrape_until(&["redlock_release_total{status=\"success\"} 7\n"])
        .await;
    assert_eq!(
        counter(&scrape, "redlock_handoffs_total{outcome=\"handed\"}"),
        handed,
        "{scrape}"
    );
    scrape
}

#[tokio::test]
async fn a_release_hands_the_lock_to_each_local_waiter_in_turn_while_nobody_else_waits() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start_with(handoff_env(&cluster, ("5s", "6s"))).await;
    let mut holder = daemon.client().await;
    let first = must_acquire(&mut holder, "handoff", 30.0, 0.0).await;
    let mut grants = queue_waiters(&daemon, "handoff", 6).await;
    assert!(release(&mut holder, &first).await);
    in_order(&mut grants, 6, first.fencing_token).await;
    // Seven releases: six handed over (no daemon but this one waited, so
    // the limit of 4 in a row does not apply), the last had nobody to hand to.
    let scrape = hand_offs_after_seven_releases(&daemon, 6).await;
    assert_eq!(counter(&scrape, "redlock_handoffs_total{outcome=\"failed\"}"), 0);
    let empty = inspect(&mut holder, "handoff").await;
    assert!(!empty.held, "{empty:?}");
    daemon.stop().await;
}

#[tokio::test]
async fn hand_offs_go_on_while_nobody_else_waits_and_every_fifth_goes_to_the_waiter_on_another_daemon() {
    let cluster = Cluster::start(5);
    // Retries 1 s apart: after the published release, the two heads may
    // split the masters' votes, and then both try again.
    let env = handoff_env(&cluster, ("1s", "1200ms"));
    let (here, elsewhere) = (Daemon::start_with(env.clone()).await, Daemon::start_with(env).await);
    // The lock must be on every master, or a master that was not yet usable
    // for `here` grants the other daemon's waiter (which then lets go) and
    // is never marked.
    here.until_usable(5).await;
    elsewhere.until_usable(5).await;
    let mut holder = here.client().await;
    let first = must_acquire(&mut holder, "shared", 30.0, 0.0).await;
    // A waiter on the other daemon is refused: every master marks the lock.
    let mut other = elsewhere.client().await;
    let waiting_elsewhere = tokio::spawn(async move {
        let lease = must_acquire(&mut other, "shared", 30.0, 20.0).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(release(&mut other, &lease).await, "held to the end");
        lease.fencing_token
    });
    for i in 0..5 {
        let admin = cluster.admin(i).await;
        let mut marked = false;
        for _ in 0..100 {
            let mark: Option<String> =
                fred::prelude::KeysInterface::get(&admin, support::keys::beside("lock:shared", "waiting:"))
                    .await
                    .unwrap();
            marked = mark.is_some();
            if marked {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(marked, "master {i} never marked the lock as waited for");
    }
    let mut grants = queue_waiters(&here, "shared", 6).await;
    assert!(release(&mut holder, &first).await);
    // Four hand-offs, then the fifth release is published, and the queue
    // here steps aside for a moment (node_timeout): the other daemon's
    // waiter wins that release rather than racing the next one here for
    // it. This daemon hands over five of its seven releases: the next one
    // here had to try after the other daemon's release, and the last one
    // had nobody to hand to.
    let theirs = tokio::time::timeout(Duration::from_secs(10), waiting_elsewhere)
        .await
        .expect("the waiter on the other daemon was starved")
        .unwrap();
    let ours = in_order(&mut grants, 6, first.fencing_token).await;
    assert!(
        ours[3] < theirs && theirs < ours[4],
        "the other daemon's waiter did not get the published release: {theirs} among {ours:?}"
    );
    hand_offs_after_seven_releases(&here, 5).await;
    here.stop().await;
    elsewhere.stop().await;
}

#[tokio::test]
async fn with_hand_offs_off_every_release_is_published_and_waiters_still_get_the_lock() {
    let cluster = Cluster::start(5);
    let mut env = test_env(&cluster);
    env.insert("REDLOCKD__LOCK__MAX_HANDOFFS_IN_ROW".into(), "0".into());
    let daemon = Daemon::start_with(env).await;
    let mut holder = daemon.client().await;
    let first = must_acquire(&mut holder, "no-handoff", 30.0, 0.0).await;
    let mut waiter = daemon.client().await;
    let waiting = tokio::spawn(async move { must_acquire(&mut waiter, "no-handoff", 30.0, 5.0).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(release(&mut holder, &first).await);
    let second = waiting.await.unwrap();
    assert!(second.fencing_token > first.fencing_token);
    let scrape = daemon.scrape().await;
    assert_eq!(
        counter(&scrape, "redlock_handoffs_total{outcome=\"handed\"}"),
        0,
        "{scrape}"
    );
    daemon.stop().await;
}
