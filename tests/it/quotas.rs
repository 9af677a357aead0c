//! Per-tenant quotas against real masters: each refuses with
//! RESOURCE_EXHAUSTED and a QuotaFailure naming it.
use redlockd_client::proto::hold_request::Request as Ask;
use redlockd_client::proto::{AcquireRequest, HoldEvent, HoldRequest, HoldStart, ReleaseRequest};
use tonic::{Code, Status};
use tonic_types::StatusExt;

use crate::support::Cluster;
use crate::support::tenants::{ALPHA, BETA, acquire, authed, daemon_with_tenants, dur};

/// The quota a RESOURCE_EXHAUSTED status names in its QuotaFailure.
fn quota_of(status: &Status) -> String {
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    let failure = status.get_details_quota_failure().expect("a QuotaFailure detail");
    assert_eq!(failure.violations.len(), 1);
    assert_eq!(failure.violations[0].subject, "tenant:beta");
    failure.violations[0].quota_id.clone()
}

#[tokio::test]
async fn each_quota_refuses_with_resource_exhausted_and_names_itself() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let quota =
        "[tenant.quota]\nmax_locks_held = 2\nmax_waiters = 1\nmax_sessions = 1\nmax_acquires_per_second = 1000.0\n";
    let daemon = daemon_with_tenants(&cluster, dir.path(), quota).await;
    let mut client = daemon.client().await;
    let mut leases = Vec::new();
    for i in 0..2 {
        let reply = client
            .acquire(authed(acquire(&format!("q{i}"), 30_000, ""), BETA))
            .await
            .unwrap();
        leases.push(reply.into_inner().lease.unwrap());
    }
    let status = client
        .acquire(authed(acquire("q2", 30_000, ""), BETA))
        .await
        .unwrap_err();
    assert_eq!(quota_of(&status), "max_locks_held");
    assert!(status.message().contains("max_locks_held"), "{}", status.message());
    // Another tenant is not limited by beta's quota.
    assert!(
        client
            .acquire(authed(acquire("q2", 30_000, ""), ALPHA))
            .await
            .unwrap()
            .into_inner()
            .acquired
    );
    // Releasing one frees its unit.
    client
        .release(authed(
            ReleaseRequest {
                resource: "q0".into(),
                value: leases.remove(0).value,
            },
            BETA,
        ))
        .await
        .unwrap();
    // One waiter at most: the first waits (for q1, held), the second is refused.
    let mut waiter = client.clone();
    let first = tokio::spawn(async move {
        waiter
            .acquire(authed(
                AcquireRequest {
                    wait: dur(20_000),
                    ..acquire("q1", 30_000, "")
                },
                BETA,
            ))
            .await
    });
    daemon.until_waiters(1).await;
    let status = client
        .acquire(authed(
            AcquireRequest {
                wait: dur(5_000),
                ..acquire("q1", 30_000, "")
            },
            BETA,
        ))
        .await
        .unwrap_err();
    assert_eq!(quota_of(&status), "max_waiters");
    first.abort();
    // One session at most.
    let start = |resource: &str| {
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        tx.try_send(HoldRequest {
            request: Some(Ask::Start(HoldStart {
                resource: resource.into(),
                ttl: dur(10_000),
                ..HoldStart::default()
            })),
        })
        .unwrap();
        (tx, tokio_stream::wrappers::ReceiverStream::new(rx))
    };
    let (_keep, stream) = start("s1");
    let mut session = client.hold(authed(stream, BETA)).await.unwrap().into_inner();
    let event = session.message().await.unwrap().unwrap();
    assert_eq!(event.event(), HoldEvent::Acquired);
    let (_keep2, stream) = start("s2");
    let status = match client.hold(authed(stream, BETA)).await {
        Err(status) => status,
        Ok(reply) => reply.into_inner().message().await.unwrap_err(),
    };
    assert_eq!(quota_of(&status), "max_sessions");
    daemon.stop().await;

    // The rate: a bucket of one second's worth.
    let quota = "[tenant.quota]\nmax_acquires_per_second = 3.0\n";
    let dir = tempfile::tempdir().unwrap();
    let daemon = daemon_with_tenants(&cluster, dir.path(), quota).await;
    let mut client = daemon.client().await;
    let mut refused = None;
    for i in 0..10 {
        match client.acquire(authed(acquire(&format!("r{i}"), 1_000, ""), BETA)).await {
            Ok(_) => {}
            Err(status) => {
                refused = Some((i, status));
                break;
            }
        }
    }
    let (i, status) = refused.expect("10 acquisitions at once passed a rate of 3 per second");
    assert!(i >= 3, "refused after {i}");
    assert_eq!(quota_of(&status), "max_acquires_per_second");
    daemon.stop().await;
}
