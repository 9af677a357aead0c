//! Sessions and waiting against five real masters: the Hold stream (ACQUIRED,
//! EXTENDED, LOST, RELEASED), FIFO waiters woken by published releases,
//! waiter limits, Inspect, and per-node failure details.

use crate::support;

use std::collections::HashMap;
use std::time::Duration;

use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{
    HoldEvent, HoldRequest, HoldResponse, HoldStart, InspectRequest, InspectResponse, NodeOutcome, hold_request,
};
use support::*;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;
use tonic::{Code, Streaming};
use tonic_types::StatusExt;

/// An open Hold session: send with `tx` (drop it to half-close), read `rx`.
struct Session {
    tx: Option<mpsc::Sender<HoldRequest>>,
    rx: Streaming<HoldResponse>,
}

async fn hold(client: &mut LockClient<Channel>, resource: &str, ttl: f64, max_hold: Option<f64>) -> Session {
    let (tx, requests) = mpsc::channel(4);
    let start = HoldStart {
        resource: resource.into(),
        ttl: secs(ttl),
        wait: secs(5.0),
        owner: "session-test".into(),
        max_hold: max_hold.and_then(secs),
        ..Default::default()
    };
    tx.send(HoldRequest {
        request: Some(hold_request::Request::Start(start)),
    })
    .await
    .unwrap();
    let rx = client
        .hold(ReceiverStream::new(requests))
        .await
        .expect("hold")
        .into_inner();
    Session { tx: Some(tx), rx }
}

impl Session {
    async fn next(&mut self) -> HoldResponse {
        tokio::time::timeout(Duration::from_secs(15), self.rx.message())
            .await
            .expect("no session event within 15 s")
            .expect("stream error")
            .expect("stream ended")
    }

    async fn expect(&mut self, event: HoldEvent) -> HoldResponse {
        let message = self.next().await;
        assert_eq!(message.event(), event, "{message:?}");
        message
    }
}

async fn inspect(client: &mut LockClient<Channel>, resource: &str) -> InspectResponse {
    client
        .inspect(InspectRequest {
            resource: resource.into(),
        })
        .await
        .unwrap()
        .into_inner()
}

#[tokio::test]
async fn a_session_acquires_extends_and_releases_at_once_on_half_close() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let (mut a, mut b) = (daemon.client().await, daemon.client().await);
    let mut session = hold(&mut a, "s", 0.9, None).await;
    let acquired = session.expect(HoldEvent::Acquired).await;
    let lease = acquired.lease.unwrap();
    // Extended at about a third of the TTL, several times: past the TTL.
    for _ in 0..4 {
        let extended = session.expect(HoldEvent::Extended).await.lease.unwrap();
        assert_eq!(extended.fencing_token, lease.fencing_token);
    }
    assert!(
        !try_acquire(&mut b, "s", 5.0, 0.0).await.acquired,
        "the session's lock lapsed"
    );
    session.tx.take();
    let released = session.expect(HoldEvent::Released).await;
    assert!(released.held_to_end, "{released:?}");
    must_acquire(&mut b, "s", 5.0, 0.0).await;
    daemon.stop().await;
}

#[tokio::test]
async fn a_cancelled_or_disconnected_session_frees_its_lock_long_before_the_ttl() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut observer = daemon.client().await;
    for how in ["cancel", "disconnect"] {
        let mut client = daemon.client().await;
        let mut session = hold(&mut client, how, 60.0, None).await;
        session.expect(HoldEvent::Acquired).await;
        assert!(inspect(&mut observer, how).await.held);
        match how {
            "cancel" => drop(session),
            _ => {
                drop(session);
                drop(client);
            }
        }
        // A TTL of 60 s: only the release can free it this soon.
        must_acquire(&mut observer, how, 5.0, 10.0).await;
    }
    daemon.stop().await;
}

#[tokio::test]
async fn a_session_is_told_lost_when_a_majority_of_masters_dies() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let mut session = hold(&mut client, "s", 1.0, None).await;
    let acquired = session.expect(HoldEvent::Acquired).await;
    // The client's own view: validity counted from receipt of each message.
    let until = |m: &HoldResponse| {
        let validity: Duration = m.lease.as_ref().unwrap().validity.unwrap().try_into().unwrap();
        tokio::time::Instant::now() + validity
    };
    let mut valid_until = until(&acquired);
    for i in 0..3 {
        cluster.kill(i);
    }
    loop {
        let message = session.next().await;
        match message.event() {
            HoldEvent::Extended => valid_until = until(&message),
            HoldEvent::Lost => break,
            other => panic!("expected LOST, got {other:?}"),
        }
    }
    // The LOST contract: it comes before the client's validity runs out.
    assert!(
        tokio::time::Instant::now() < valid_until,
        "LOST came after the validity ran out"
    );
    assert!(
        session.rx.message().await.unwrap().is_none(),
        "the stream did not end after LOST"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn max_hold_ends_the_session_with_released() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let (mut a, mut b) = (daemon.client().await, daemon.client().await);
    let mut session = hold(&mut a, "s", 0.9, Some(1.5)).await;
    session.expect(HoldEvent::Acquired).await;
    let released = loop {
        let message = session.next().await;
        if message.event() != HoldEvent::Extended {
            break message;
        }
    };
    assert_eq!(released.event(), HoldEvent::Released);
    assert!(released.reason.contains("max_hold"), "{released:?}");
    must_acquire(&mut b, "s", 5.0, 0.0).await;
    daemon.stop().await;
}

#[tokio::test]
async fn sessions_are_released_when_the_daemon_shuts_down() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let mut session = hold(&mut client, "s", 30.0, None).await;
    session.expect(HoldEvent::Acquired).await;
    let stopping = tokio::spawn(daemon.stop());
    let released = session.expect(HoldEvent::Released).await;
    assert!(released.reason.contains("shutting down"), "{released:?}");
    stopping.await.unwrap();
    let other = Daemon::start(&cluster).await;
    must_acquire(&mut other.client().await, "s", 5.0, 0.0).await;
    other.stop().await;
}

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

#[tokio::test]
async fn two_daemons_contending_for_many_rounds_both_make_progress() {
    let cluster = Cluster::start(5);
    let daemons = [Daemon::start(&cluster).await, Daemon::start(&cluster).await];
    let mut tasks = Vec::new();
    for (d, daemon) in daemons.iter().enumerate() {
        for _ in 0..2 {
            let mut client = daemon.client().await;
            tasks.push(tokio::spawn(async move {
                let mut grants = 0;
                let until = tokio::time::Instant::now() + Duration::from_secs(4);
                while tokio::time::Instant::now() < until {
                    let reply = try_acquire(&mut client, "contended", 5.0, 1.0).await;
                    if let Some(lease) = reply.lease {
                        grants += 1;
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        release(&mut client, &lease).await;
                    }
                }
                (d, grants)
            }));
        }
    }
    let mut per_daemon = [0; 2];
    for task in tasks {
        let (d, grants) = task.await.unwrap();
        per_daemon[d] += grants;
    }
    println!("grants per daemon: {per_daemon:?}");
    // Both progress, and neither wins most hand-offs: Redis announces a
    // release to the daemons in subscription order, which must not decide.
    let total: u32 = per_daemon.iter().sum();
    assert!(total >= 20, "too few grants to judge: {per_daemon:?}");
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

#[tokio::test]
async fn inspect_agrees_with_the_masters_also_after_one_is_killed() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let free = inspect(&mut client, "i").await;
    assert!(!free.held && free.agreeing == 0 && free.quorum == 3, "{free:?}");
    let lease = must_acquire(&mut client, "i", 30.0, 0.0).await;
    let view = inspect(&mut client, "i").await;
    assert!(view.held && view.agreeing == 5, "{view:?}");
    for (i, node) in view.nodes.iter().enumerate() {
        assert!(node.reachable && node.held && node.with_majority, "{node:?}");
        assert!(node.ttl.is_some_and(|t| t.seconds <= 30), "{node:?}");
        assert_eq!(node.state, "usable");
        let fence: u64 = cluster.fence(i, "i").await.unwrap().parse().unwrap();
        assert_eq!(node.fence_counter, fence, "node {i}");
    }
    let text = format!("{view:?}");
    assert!(!text.contains(&lease.value), "Inspect leaked the lock value");

    cluster.kill(2);
    let view = inspect(&mut client, "i").await;
    assert!(view.held && view.agreeing == 4, "{view:?}");
    assert!(!view.nodes[2].reachable && !view.nodes[2].held);
    assert!(release(&mut client, &lease).await);
    let view = inspect(&mut client, "i").await;
    assert!(!view.held && view.agreeing == 0, "{view:?}");
    daemon.stop().await;
}

#[tokio::test]
async fn failed_acquisitions_and_unavailable_carry_what_each_master_said() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let _lease = must_acquire(&mut client, "d", 30.0, 0.0).await;
    let refused = try_acquire(&mut client, "d", 5.0, 0.0).await;
    assert_eq!(refused.nodes().collect::<Vec<_>>(), vec![NodeOutcome::Taken; 5]);

    for i in [0, 1, 4] {
        cluster.kill(i);
    }
    let status = client.acquire(acquire_req("e", 5.0, 0.0)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    let info = status.get_details_error_info().expect("an ErrorInfo detail");
    assert_eq!(info.reason, "NO_QUORUM");
    let metadata: HashMap<String, String> = info.metadata.into_iter().collect();
    assert!(
        ["errored", "timed out"].contains(&metadata["node.0"].as_str()),
        "{metadata:?}"
    );
    assert_eq!(metadata["node.2"], "granted");
    assert_eq!(metadata["needed"], "3");
    daemon.stop().await;
}

#[tokio::test]
async fn a_session_whose_client_host_vanishes_is_released_after_the_keepalive() {
    let cluster = Cluster::start(5);
    let mut env = test_env(&cluster);
    env.insert("REDLOCKD__SERVER__KEEPALIVE".into(), "300ms".into());
    let daemon = Daemon::start_with(env).await;
    // The client reaches the daemon through a proxy that will go silent:
    // no FIN, no RST, like a host that lost power.
    let link = support::proxy::Proxy::start(daemon.addr).await;
    let mut far = LockClient::connect(format!("http://{}", link.addr())).await.unwrap();
    let mut session = hold(&mut far, "v", 30.0, None).await;
    session.expect(HoldEvent::Acquired).await;
    link.set_mode(support::proxy::Mode::Blackhole);
    // TTL 30 s: only the keepalive noticing the dead connection frees it.
    let mut near = daemon.client().await;
    must_acquire(&mut near, "v", 5.0, 10.0).await;
    daemon.stop().await;
}

#[tokio::test]
async fn a_session_ttl_too_short_to_extend_in_time_is_invalid_and_names_ttl() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    // test_env: node_timeout 100ms, so a session needs at least 800ms.
    let mut session = hold(&mut client, "t", 0.5, None).await;
    let status = session.rx.message().await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("ttl"), "{}", status.message());
    daemon.stop().await;
}

#[tokio::test]
async fn a_session_that_waits_in_vain_reports_not_acquired_with_what_each_master_said() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut holder = daemon.client().await;
    let _held = must_acquire(&mut holder, "n", 30.0, 0.0).await;
    let (tx, requests) = mpsc::channel(1);
    let start = HoldStart {
        resource: "n".into(),
        ttl: secs(1.0),
        wait: None,
        ..HoldStart::default()
    };
    tx.send(HoldRequest {
        request: Some(hold_request::Request::Start(start)),
    })
    .await
    .unwrap();
    let mut events = holder.hold(ReceiverStream::new(requests)).await.unwrap().into_inner();
    let message = events.message().await.unwrap().unwrap();
    assert_eq!(message.event(), HoldEvent::NotAcquired);
    assert_eq!(message.reason, "FAILURE_REASON_TAKEN");
    assert_eq!(message.nodes().collect::<Vec<_>>(), vec![NodeOutcome::Taken; 5]);
    daemon.stop().await;
}
