//! `Hold` sessions against five real masters: ACQUIRED, EXTENDED, LOST and
//! RELEASED; the lock freed at once on half-close, cancel or a vanished
//! client, and at `max_hold` or shutdown; a TTL too short to extend in time
//! and a wait in vain.

use crate::support;

use std::time::Duration;

use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{HoldEvent, HoldRequest, HoldResponse, HoldStart, NodeOutcome, hold_request};
use support::hold::{hold, inspect};
use support::*;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;

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
