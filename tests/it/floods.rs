//! Limits that keep a flood from starving other clients (docs/security.md):
//! waiters and sessions beyond their caps are refused while others are
//! served, and oversized messages are refused before they are decoded.

use crate::support;

use redlockd_client::proto::AcquireRequest;
use support::hold::hold_start;
use support::*;
use tonic::Code;

#[tokio::test]
async fn a_flood_of_waiters_and_sessions_is_refused_while_other_clients_are_served() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start_with(env_with(
        &cluster,
        &[
            ("REDLOCKD__LOCK__MAX_WAITERS_PER_RESOURCE", "40".into()),
            ("REDLOCKD__LOCK__MAX_WAITERS", "60".into()),
            ("REDLOCKD__LOCK__MAX_SESSIONS", "30".into()),
        ],
    ))
    .await;
    let mut client = daemon.client().await;
    let holder = must_acquire(&mut client, "hot", 10.0, 0.0).await;
    // 200 waiters on the held resource, 200 sessions on others.
    let mut waiters = Vec::new();
    for _ in 0..200 {
        let mut client = client.clone();
        waiters.push(tokio::spawn(async move {
            client
                .acquire(acquire_req("hot", 2.0, 8.0))
                .await
                .map(|r| r.into_inner())
        }));
    }
    let mut sessions = Vec::new();
    for i in 0..200 {
        let mut client = client.clone();
        sessions.push(tokio::spawn(async move {
            let (tx, rx) = tokio::sync::mpsc::channel(1);
            tx.send(hold_start(&format!("session-{i}"))).await.unwrap();
            let outcome = match client.hold(tokio_stream::wrappers::ReceiverStream::new(rx)).await {
                Err(status) => Err(status.code()),
                Ok(response) => {
                    let mut stream = response.into_inner();
                    match stream.message().await {
                        Err(status) => Err(status.code()),
                        Ok(_) => Ok(()),
                    }
                }
            };
            (outcome, tx)
        }));
    }
    // Meanwhile an unrelated client is served, every time.
    let mut other = daemon.client().await;
    for round in 0..20 {
        let lease = must_acquire(&mut other, &format!("cold-{round}"), 2.0, 0.0).await;
        assert!(release(&mut other, &lease).await);
    }
    assert!(release(&mut client, &holder).await);
    let mut exhausted = 0;
    for waiter in waiters {
        match waiter.await.unwrap() {
            Err(status) if status.code() == Code::ResourceExhausted => {
                assert!(status.message().contains("max_waiters"), "{}", status.message());
                exhausted += 1;
            }
            Err(status) => panic!("a waiter failed otherwise: {status:?}"),
            Ok(_) => {}
        }
    }
    assert!(
        exhausted >= 160,
        "only {exhausted} of 200 waiters were refused with 40 allowed"
    );
    let mut refused_sessions = 0;
    let mut open = Vec::new();
    for session in sessions {
        let (outcome, tx) = session.await.unwrap();
        match outcome {
            Err(Code::ResourceExhausted) => refused_sessions += 1,
            Err(code) => panic!("a session failed otherwise: {code:?}"),
            Ok(()) => open.push(tx),
        }
    }
    assert_eq!(refused_sessions, 170, "30 sessions allowed of 200");
    drop(open);
    daemon.stop().await;
}

#[tokio::test]
async fn oversized_messages_are_refused_before_decoding_and_the_daemon_serves_on() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let huge = AcquireRequest {
        owner: "x".repeat(8 * 1024),
        ..acquire_req("big", 2.0, 0.0)
    };
    let status = client.acquire(huge).await.unwrap_err();
    assert_eq!(status.code(), Code::OutOfRange, "{status:?}");
    assert!(status.message().contains("4096"), "{}", status.message());
    let lease = must_acquire(&mut client, "big", 2.0, 0.0).await;
    assert!(release(&mut client, &lease).await);
    daemon.stop().await;
}
