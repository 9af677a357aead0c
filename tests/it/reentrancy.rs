//! Keyed reentrancy against a real daemon and five real masters
//! (docs/design.md#reentrancy): the same key gets the same value and token
//! at once and counts up, releases count down and the lock goes at zero; a
//! lapsed lock is not reentered; a session is one hold; bad keys and a key
//! asking for another kind are refused.

use crate::support;

use std::time::Duration;

use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{AcquireRequest, Lease, LockMode};
use redlockd_client::{Client, HoldOptions, Options};
use support::*;
use tonic::transport::Channel;

fn keyed(resource: &str, key: &str, ttl: f64, wait: f64) -> AcquireRequest {
    AcquireRequest {
        reentrancy_key: key.into(),
        ..acquire_req(resource, ttl, wait)
    }
}

async fn take(c: &mut LockClient<Channel>, request: AcquireRequest) -> Option<Lease> {
    let reply = c.acquire(request).await.unwrap().into_inner();
    reply.lease.filter(|_| reply.acquired)
}

#[tokio::test]
async fn the_same_key_gets_the_same_lease_and_the_lock_goes_at_the_last_release() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut c = daemon.client().await;
    let first = take(&mut c, keyed("report", "job-7", 10.0, 0.0))
        .await
        .expect("a free lock");
    let second = take(&mut c, keyed("report", "job-7", 10.0, 0.0))
        .await
        .expect("the same key");
    assert_eq!(
        (&second.value, second.fencing_token),
        (&first.value, first.fencing_token)
    );
    let third = take(&mut c, keyed("report", "job-7", 10.0, 0.0))
        .await
        .expect("and again");
    assert_eq!(third.value, first.value);
    // Without the key, or with another, it is held.
    assert!(!try_acquire(&mut c, "report", 10.0, 0.0).await.acquired);
    assert!(take(&mut c, keyed("report", "job-8", 10.0, 0.0)).await.is_none());
    // Three holds: two releases leave it held, the third lets it go.
    for _ in 0..2 {
        assert!(release(&mut c, &first).await, "a release counting down");
        assert!(
            !try_acquire(&mut c, "report", 10.0, 0.0).await.acquired,
            "released before zero"
        );
    }
    assert!(release(&mut c, &first).await, "the last hold");
    let next = must_acquire(&mut c, "report", 10.0, 0.0).await;
    assert!(next.fencing_token > first.fencing_token);
    assert!(release(&mut c, &next).await);
    // Fresh under the key again: a new value and a new token.
    let fresh = take(&mut c, keyed("report", "job-7", 10.0, 0.0)).await.unwrap();
    assert!(fresh.value != first.value && fresh.fencing_token > next.fencing_token);
    daemon.stop().await;
}

#[tokio::test]
async fn a_lapsed_lock_is_not_reentered_and_a_waiting_key_shares_the_grant_it_waited_for() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut c = daemon.client().await;
    let short = take(&mut c, keyed("r", "k", 0.5, 0.0)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    let after = take(&mut c, keyed("r", "k", 10.0, 0.0))
        .await
        .expect("expired: free again");
    assert!(after.value != short.value && after.fencing_token > short.fencing_token);
    assert!(release(&mut c, &after).await);

    // Two acquisitions with one key wait for a lock held by someone else:
    // the first grant is the other's too.
    let holder = must_acquire(&mut c, "busy", 10.0, 0.0).await;
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let mut c = c.clone();
            tokio::spawn(async move { take(&mut c, keyed("busy", "batch-1", 10.0, 5.0)).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(release(&mut c, &holder).await);
    let mut got = Vec::new();
    for waiter in waiters {
        got.push(waiter.await.unwrap().expect("granted after the release"));
    }
    assert_eq!(got[0].value, got[1].value);
    assert_eq!(got[0].fencing_token, got[1].fencing_token);
    daemon.stop().await;
}

#[tokio::test]
async fn a_session_is_one_hold_under_its_key() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let client = Client::connect(&daemon.addr.to_string(), Options::default())
        .await
        .unwrap();
    let mut c = daemon.client().await;
    let unary = take(&mut c, keyed("deploy", "rollout-3", 2.0, 0.0)).await.unwrap();
    let options = HoldOptions::new()
        .ttl(Duration::from_secs(2))
        .reentrancy_key("rollout-3");
    let session = client.hold("deploy", options).await.expect("the key's lock");
    assert_eq!(session.fencing_token(), unary.fencing_token);
    // The unary hold goes; the session keeps the lock past its TTL.
    assert!(release(&mut c, &unary).await);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(
        !try_acquire(&mut c, "deploy", 10.0, 0.0).await.acquired,
        "the session still holds it"
    );
    assert!(session.release().await.unwrap());
    must_acquire(&mut c, "deploy", 10.0, 1.0).await;
    daemon.stop().await;
}

#[tokio::test]
async fn long_keys_and_a_key_asking_for_another_kind_are_refused() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut c = daemon.client().await;
    let status = c.acquire(keyed("r", &"k".repeat(129), 10.0, 0.0)).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(
        status.message().contains("reentrancy_key") && status.message().contains("at most 128"),
        "{status:?}"
    );
    take(&mut c, keyed("r", "k", 10.0, 0.0)).await.unwrap();
    let shared = AcquireRequest {
        mode: LockMode::Shared.into(),
        ..keyed("r", "k", 10.0, 0.0)
    };
    let status = c.acquire(shared).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert!(
        status.message().contains("held under this key as exclusive"),
        "{status:?}"
    );
    daemon.stop().await;
}
