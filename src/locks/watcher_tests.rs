//! Watching a lock on in-memory masters with Tokio's clock paused: the
//! current state first, then each change named.

use std::time::Duration;

use tokio::time::timeout;

use crate::locks::session::tests::locks;
use crate::locks::watcher::Change;
use crate::locks::who::Who;
use crate::redlock::{ALONE, Acquired, Kind};

#[tokio::test(start_paused = true)]
async fn a_watcher_sees_the_state_then_each_change_named() {
    let (locks, engine, _) = locks();
    let mut watcher = locks.watch("lock:w");
    let (change, state) = watcher.next().await;
    assert_eq!(change, Change::Current);
    assert!(!state.held && state.holder.is_none());

    // Through this daemon: told at once.
    let who = Who {
        owner: "o1".into(),
        ..Who::default()
    };
    let ttl = Duration::from_secs(3);
    let granted = locks
        .acquire(
            "lock:w".into(),
            (Kind::Exclusive, ttl.into()),
            Duration::ZERO,
            std::future::pending(),
            (&who, None),
        )
        .await
        .unwrap();
    let Acquired::Granted(lease) = granted else {
        panic!("granted")
    };
    let (change, state) = timeout(Duration::from_millis(200), watcher.next())
        .await
        .expect("at once");
    assert_eq!(change, Change::Acquired);
    assert_eq!(state.holder.as_ref().map(|h| h.owner.as_str()), Some("o1"));
    let token = state.holder.map(|h| h.fencing_token);
    assert!(
        token >= Some(lease.fencing_token),
        "Inspect's token is the lease's or above it"
    );
    locks.release("lock:w", &lease.value, &who).await.unwrap();
    let (change, state) = timeout(Duration::from_millis(200), watcher.next())
        .await
        .expect("at once");
    assert_eq!(change, Change::Released);
    assert_eq!(state.holder.map(|h| h.fencing_token), token, "the holder that let go");

    // Behind this daemon's back: found by the backstop read (1 s), and a
    // lock left to its TTL is EXPIRED.
    let short = Duration::from_millis(1500);
    engine
        .acquire(
            "lock:w",
            (Kind::Exclusive, short),
            Duration::ZERO,
            std::future::pending(),
            ALONE,
            "",
        )
        .await
        .unwrap();
    let (change, _) = timeout(Duration::from_millis(1200), watcher.next())
        .await
        .expect("within a period");
    assert_eq!(change, Change::Acquired);
    let (change, _) = timeout(Duration::from_secs(3), watcher.next())
        .await
        .expect("after the TTL");
    assert_eq!(change, Change::Expired);

    // Taken away by an operator through this daemon.
    locks
        .acquire(
            "lock:w".into(),
            (Kind::Exclusive, ttl.into()),
            Duration::ZERO,
            std::future::pending(),
            (&who, None),
        )
        .await
        .unwrap();
    assert_eq!(watcher.next().await.0, Change::Acquired);
    locks.force_release("lock:w", &who, "test").await.unwrap();
    let (change, _) = timeout(Duration::from_millis(200), watcher.next())
        .await
        .expect("at once");
    assert_eq!(change, Change::ForceReleased);
    // Nothing changes: nothing is told.
    assert!(timeout(Duration::from_secs(5), watcher.next()).await.is_err());
    assert_eq!(locks.followed.open(), 1);
    drop(watcher);
    assert_eq!(locks.followed.open(), 0);
}
