//! Semaphores against a real daemon and five real masters
//! (docs/design.md#semaphores): N permits out and the next refused until
//! one returns, each on a slot of its own with tokens per slot; every
//! holder must agree on N, also while a permit is only extended; waiting
//! for a permit; sessions; bad input.

use crate::support;

use std::time::Duration;

use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{AcquireRequest, ExtendRequest, Lease, LockMode};
use redlockd_client::{Client, HoldOptions, Options};
use support::*;
use tonic::transport::Channel;

fn permit_req(resource: &str, permits: u32, ttl: f64, wait: f64) -> AcquireRequest {
    AcquireRequest {
        permits,
        ..acquire_req(resource, ttl, wait)
    }
}

async fn permit(c: &mut LockClient<Channel>, resource: &str, permits: u32, wait: f64) -> Option<Lease> {
    let reply = c
        .acquire(permit_req(resource, permits, 10.0, wait))
        .await
        .unwrap()
        .into_inner();
    reply.lease.filter(|_| reply.acquired)
}

#[tokio::test]
async fn n_permits_go_out_on_n_slots_and_the_next_waits_for_one_to_return() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut c = daemon.client().await;
    let mut out = Vec::new();
    for _ in 0..3 {
        out.push(permit(&mut c, "pool", 3, 0.0).await.expect("a free permit"));
    }
    let mut slots: Vec<u32> = out.iter().map(|l| l.slot).collect();
    slots.sort_unstable();
    assert_eq!(slots, [0, 1, 2], "one permit per slot");
    assert!(out.iter().all(|l| l.permits == 3 && l.value.starts_with("p3.")));
    assert!(
        permit(&mut c, "pool", 3, 0.0).await.is_none(),
        "a fourth permit of three"
    );
    let view = c
        .inspect(redlockd_client::proto::InspectRequest {
            resource: "pool".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((view.permits, view.permits_out, view.held), (3, 3, false), "{view:?}");
    // The pool is not the lock of the same name.
    let lock = must_acquire(&mut c, "pool", 10.0, 0.0).await;
    assert!(release(&mut c, &lock).await);

    // A waiting request gets the permit given back, with a larger token
    // than that slot's last.
    let waiting = {
        let mut c = c.clone();
        tokio::spawn(async move { permit(&mut c, "pool", 3, 5.0).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "a waiting permit was granted with none free");
    let back = out.remove(1);
    assert!(release(&mut c, &back).await, "held to the end");
    let next = waiting.await.unwrap().expect("the permit given back");
    assert_eq!(next.slot, back.slot);
    assert!(next.fencing_token > back.fencing_token);
    daemon.stop().await;
}

#[tokio::test]
async fn every_holder_must_agree_on_n_also_while_a_permit_is_only_extended() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut c = daemon.client().await;
    let held = c
        .acquire(permit_req("jobs", 2, 1.0, 0.0))
        .await
        .unwrap()
        .into_inner()
        .lease
        .expect("a permit");
    let differ = |c: &mut LockClient<Channel>| {
        let mut c = c.clone();
        async move { c.acquire(permit_req("jobs", 3, 1.0, 0.0)).await.unwrap_err() }
    };
    let status = differ(&mut c).await;
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert!(status.message().contains("held with 2 permits"), "{status:?}");
    // Past the first TTL the permit lives by extensions alone: N with it.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let extend = ExtendRequest {
            resource: "jobs".into(),
            value: held.value.clone(),
            ttl: secs(1.0),
        };
        assert!(c.extend(extend).await.unwrap().into_inner().extended);
    }
    assert_eq!(differ(&mut c).await.code(), tonic::Code::FailedPrecondition);
    assert!(release(&mut c, &held).await);
    // N is remembered at most a TTL after the last permit went.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let three = permit(&mut c, "jobs", 3, 0.0)
        .await
        .expect("a new N once no permit is out");
    assert_eq!(three.permits, 3);
    daemon.stop().await;
}

#[tokio::test]
async fn sessions_hold_permits_and_a_third_session_waits_for_one() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let client = Client::connect(&daemon.addr.to_string(), Options::default())
        .await
        .unwrap();
    let two = || HoldOptions::new().ttl(Duration::from_secs(2)).permits(2);
    let a = client.hold("gpu", two()).await.unwrap();
    let b = client.hold("gpu", two()).await.unwrap();
    assert_ne!(a.slot(), b.slot());
    let third = {
        let client = client.clone();
        tokio::spawn(async move { client.hold("gpu", two().wait(Duration::from_secs(10))).await })
    };
    // Past a TTL: the sessions keep their permits, the third waits.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!third.is_finished(), "three sessions on two permits");
    let slot = b.slot();
    assert!(b.release().await.unwrap());
    let third = third.await.unwrap().expect("the permit given back");
    assert_eq!(third.slot(), slot);
    drop((a, third));
    daemon.stop().await;
}

#[tokio::test]
async fn permits_out_of_range_or_shared_are_refused_naming_permits() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut c = daemon.client().await;
    let cases = [
        (permit_req("p", 65, 1.0, 0.0), "maximum of 64"),
        (
            AcquireRequest {
                mode: LockMode::Shared.into(),
                ..permit_req("p", 2, 1.0, 0.0)
            },
            "shared lock takes no permits",
        ),
    ];
    for (request, says) in cases {
        let status = c.acquire(request).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
        assert!(
            status.message().contains("permits") && status.message().contains(says),
            "{status:?}"
        );
    }
    let client = Client::connect(&daemon.addr.to_string(), Options::default())
        .await
        .unwrap();
    let shared = HoldOptions::new().shared().permits(2);
    match client.hold("p", shared).await {
        Err(redlockd_client::Error::InvalidArgument(message)) => assert!(message.contains("permits"), "{message}"),
        Err(other) => panic!("expected INVALID_ARGUMENT naming permits, got {other}"),
        Ok(_) => panic!("a shared session with permits was granted"),
    }
    daemon.stop().await;
}
