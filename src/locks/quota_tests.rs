//! The tenants' quotas counted and refused (docs/operations.md#quotas).

use std::sync::Arc;

use super::*;

#[test]
fn a_count_refuses_past_its_limit_and_frees_a_unit_when_dropped() {
    let quota = Arc::new(Quota::new(
        "t",
        Limits {
            waiters: Some(2),
            ..Limits::default()
        },
    ));
    let a = quota.take(Kind::Waiters).unwrap();
    let _b = quota.take(Kind::Waiters).unwrap();
    let Err(Error::QuotaExceeded { quota: name, .. }) = quota.take(Kind::Waiters) else {
        panic!("a third waiter was let in");
    };
    assert_eq!(name, "max_waiters");
    drop(a);
    assert!(quota.take(Kind::Waiters).is_ok());
    // Unlimited counts never refuse.
    let held: Vec<_> = (0..100).map(|_| quota.take(Kind::Sessions).unwrap()).collect();
    assert_eq!(held.len(), 100);
}

#[tokio::test(start_paused = true)]
async fn the_rate_allows_a_seconds_worth_then_refills() {
    let quota = Quota::new(
        "t",
        Limits {
            acquires_per_second: Some(5.0),
            ..Limits::default()
        },
    );
    for _ in 0..5 {
        quota.acquisition().unwrap();
    }
    assert!(matches!(
        quota.acquisition(),
        Err(Error::QuotaExceeded {
            quota: "max_acquires_per_second",
            ..
        })
    ));
    tokio::time::advance(std::time::Duration::from_millis(400)).await;
    quota.acquisition().unwrap();
    quota.acquisition().unwrap();
    assert!(quota.acquisition().is_err());
}
