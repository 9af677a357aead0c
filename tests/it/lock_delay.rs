//! Lock delay on `Acquire` against two real daemons and five real masters
//! (docs/design.md#lock-delay): a holder that never releases keeps the
//! resource from everyone for `lock_delay` after its lease ran out, through
//! extensions made on another daemon; a release frees it at once; a delay
//! over `lock.max_lock_delay` is refused naming the field.

use crate::support;

use std::time::Duration;

use redlockd_client::proto::{AcquireRequest, ExtendRequest, LockMode};
use support::*;
use tokio::time::Instant;
use tonic::Code;

fn delayed(resource: &str, ttl: f64, wait: f64, lock_delay: f64) -> AcquireRequest {
    AcquireRequest {
        lock_delay: secs(lock_delay),
        ..acquire_req(resource, ttl, wait)
    }
}

#[tokio::test]
async fn a_holder_that_never_releases_keeps_the_lock_from_others_for_its_delay() {
    let cluster = Cluster::start(5);
    let (here, there) = (Daemon::start(&cluster).await, Daemon::start(&cluster).await);
    let (mut a, mut b) = (here.client().await, there.client().await);

    let lease = must_acquire_with(&mut a, delayed("printer", 1.0, 0.0, 2.0)).await;
    let validity = lease.validity.expect("a validity");
    assert!(
        validity.seconds == 0,
        "the validity counts from the ttl alone: {validity:?}"
    );
    // Extended through the other daemon: the delay rides in the value.
    let extended = b
        .extend(ExtendRequest {
            resource: lease.resource.clone(),
            value: lease.value.clone(),
            ttl: secs(1.0),
        })
        .await
        .expect("extend")
        .into_inner();
    assert!(extended.extended, "{extended:?}");
    let last_extended = Instant::now();
    // The holder "dies": no release. Past its validity the lock is not free.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let refused = try_acquire(&mut b, "printer", 1.0, 0.0).await;
    assert!(
        !refused.acquired,
        "taken {:?} after the last extension, inside the delay",
        last_extended.elapsed()
    );
    let next = must_acquire(&mut b, "printer", 1.0, 5.0).await;
    let took = last_extended.elapsed();
    assert!(
        took >= Duration::from_millis(2_900),
        "granted {took:?} after the last extension of a 1s lease with a 2s delay"
    );
    assert!(next.fencing_token > lease.fencing_token);
    assert!(release(&mut b, &next).await);

    // A release frees a delayed lock at once, on either daemon.
    let lease = must_acquire_with(&mut a, delayed("printer", 5.0, 0.0, 30.0)).await;
    assert!(release(&mut b, &lease).await);
    let again = must_acquire(&mut a, "printer", 1.0, 0.0).await;
    assert!(release(&mut a, &again).await);

    // Shared holders and permits carry it too.
    let shared = AcquireRequest {
        mode: LockMode::Shared.into(),
        ..delayed("shelf", 1.0, 0.0, 2.0)
    };
    must_acquire_with(&mut a, shared).await;
    let permit = AcquireRequest {
        permits: 2,
        ..delayed("seats", 1.0, 0.0, 2.0)
    };
    must_acquire_with(&mut a, permit.clone()).await;
    must_acquire_with(&mut a, permit.clone()).await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(
        !try_acquire(&mut b, "shelf", 1.0, 0.0).await.acquired,
        "a reader's delay holds a writer off"
    );
    let third = b
        .acquire(AcquireRequest {
            lock_delay: None,
            ..permit
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!third.acquired, "both permits are kept through their delay: {third:?}");
    must_acquire(&mut b, "shelf", 1.0, 3.0).await;
}

#[tokio::test]
async fn a_lock_delay_out_of_range_is_refused_naming_the_field() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut c = daemon.client().await;
    let error = c
        .acquire(delayed("r", 1.0, 0.0, 61.0))
        .await
        .expect_err("over lock.max_lock_delay");
    assert_eq!(error.code(), Code::InvalidArgument, "{error:?}");
    assert!(error.message().contains("lock_delay"), "{}", error.message());
    assert!(error.message().contains("1m"), "names the range: {}", error.message());
    // Nothing was taken.
    must_acquire(&mut c, "r", 1.0, 0.0).await;
}
