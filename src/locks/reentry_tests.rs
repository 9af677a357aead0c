//! Reentrancy keys: the same lease again, counted, let go at zero
//! (docs/design.md#reentrancy).

use std::time::Duration;

use super::*;
use crate::redlock::LockValue;

fn lease(validity: Duration) -> Lease {
    Lease {
        resource: "r".into(),
        value: LockValue::random(),
        fencing_token: 42,
        validity,
    }
}

#[tokio::test(start_paused = true)]
async fn a_key_reenters_with_the_same_lease_counts_and_lets_go_at_zero() {
    let reentries = Reentries::default();
    let mut turn = reentries.turn("lock:r", "job-7").await;
    assert_eq!(turn.reenter(Kind::Exclusive), Ok(None), "nothing held yet");
    let first = lease(Duration::from_secs(10));
    turn.hold(&first, Kind::Exclusive);
    tokio::time::advance(Duration::from_secs(4)).await;
    let again = reentries
        .turn("lock:r", "job-7")
        .await
        .reenter(Kind::Exclusive)
        .unwrap()
        .unwrap();
    assert_eq!((&again.value, again.fencing_token), (&first.value, 42));
    assert_eq!(again.validity, Duration::from_secs(6), "what is left of it");
    // Another key, another lock name, another kind: not this lock.
    assert_eq!(
        reentries.turn("lock:r", "job-8").await.reenter(Kind::Exclusive),
        Ok(None)
    );
    assert_eq!(
        reentries.turn("lock:s", "job-7").await.reenter(Kind::Exclusive),
        Ok(None)
    );
    let shared = reentries.turn("lock:r", "job-7").await.reenter(Kind::Shared);
    assert_eq!(shared, Err(Kind::Exclusive));
    assert_eq!(reentries.leave(first.value.expose()).await, Left::Counted(1));
    assert_eq!(reentries.leave(first.value.expose()).await, Left::Last);
    // The key given back is forgotten; the two that only looked (job-8,
    // lock:s) hold nothing and go at the next sweep.
    assert_eq!(reentries.remembered(), (2, 0), "a key given back is forgotten");
    assert_eq!(reentries.leave(first.value.expose()).await, Left::NotKeyed);
    assert_eq!(
        reentries.turn("lock:r", "job-7").await.reenter(Kind::Exclusive),
        Ok(None)
    );
}

#[tokio::test(start_paused = true)]
async fn keys_of_locks_that_lapsed_unreleased_are_swept() {
    let reentries = Reentries::default();
    for i in 0..SWEEP_FROM - 1 {
        let turn = reentries.turn("lock:r", &format!("trace-{i}")).await;
        turn.hold(&lease(Duration::from_secs(1)), Kind::Exclusive);
    }
    let live = lease(Duration::from_secs(60));
    reentries.turn("lock:r", "live").await.hold(&live, Kind::Exclusive);
    assert_eq!(reentries.remembered(), (SWEEP_FROM, SWEEP_FROM));
    tokio::time::advance(Duration::from_secs(2)).await;
    let turn = reentries.turn("lock:r", "new").await;
    drop(turn);
    assert_eq!(
        reentries.remembered(),
        (2, 1),
        "only the live key and the new one are left"
    );
    assert!(
        reentries
            .turn("lock:r", "live")
            .await
            .reenter(Kind::Exclusive)
            .unwrap()
            .is_some()
    );
}

#[tokio::test(start_paused = true)]
async fn a_lapsed_lock_is_not_reentered_and_an_extension_keeps_it() {
    let reentries = Reentries::default();
    let held = lease(Duration::from_secs(2));
    reentries.turn("lock:r", "k").await.hold(&held, Kind::Exclusive);
    tokio::time::advance(Duration::from_secs(1)).await;
    reentries
        .extended(held.value.expose(), Instant::now() + Duration::from_secs(2))
        .await;
    tokio::time::advance(Duration::from_millis(1500)).await;
    let again = reentries.turn("lock:r", "k").await.reenter(Kind::Exclusive).unwrap();
    assert!(again.is_some(), "extended: still held");
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(reentries.turn("lock:r", "k").await.reenter(Kind::Exclusive), Ok(None));
    assert_eq!(reentries.leave(held.value.expose()).await, Left::NotKeyed);
}
