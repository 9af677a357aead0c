//! Lock delay in a value (docs/design.md#lock-delay): parsed back, a permit's
//! slot kept, the masters keeping a delayed lock past its validity.

use std::future::pending;

use super::*;
use crate::redlock::engine::tests::{cluster, lease};
use crate::redlock::fake::FakeNode;
use crate::redlock::{ALONE, Kind, Mode, Permit};

#[test]
fn a_delay_rides_in_the_value_and_survives_a_parse() {
    let plain = LockValue::random_for(Mode::Shared);
    let delayed = plain.clone().delayed(Duration::from_micros(2_500_100));
    assert_eq!(
        delayed.expose(),
        format!("{}+2501", plain.expose()),
        "rounded up to a millisecond"
    );
    let parsed = LockValue::parse(delayed.expose()).unwrap();
    assert_eq!(parsed.lock_delay(), Duration::from_millis(2501));
    assert_eq!(parsed.mode(), Mode::Shared);
    assert_eq!(parsed.key_ttl(Duration::from_secs(1)), Duration::from_millis(3501));
    assert_eq!(plain.lock_delay(), Duration::ZERO);
    assert_eq!(plain.key_ttl(Duration::from_secs(1)), Duration::from_secs(1));
    assert_eq!(plain.clone().delayed(Duration::ZERO), plain, "no delay, no suffix");
}

#[test]
fn a_permit_keeps_its_slot_under_a_delay() {
    let value = LockValue::random_permit(Permit { of: 3, slot: 2 }).delayed(Duration::from_secs(5));
    let parsed = LockValue::parse(value.expose()).unwrap();
    assert_eq!(parsed.permit(), Some(Permit { of: 3, slot: 2 }));
    assert_eq!(parsed.lock_delay(), Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn the_masters_keep_a_delayed_lock_past_its_validity_and_extensions_keep_the_margin() {
    let (engine, nodes) = cluster(&[0; 5]);
    let ttl = Duration::from_secs(1);
    let lifetime = Lifetime {
        ttl,
        lock_delay: Duration::from_secs(2),
    };
    let granted = engine
        .acquire("r", (Kind::Exclusive, lifetime), Duration::ZERO, pending(), ALONE, "")
        .await;
    let first = lease(granted);
    assert!(
        first.validity <= ttl,
        "validity counts from the ttl alone: {:?}",
        first.validity
    );
    assert_eq!(first.value.lock_delay(), Duration::from_secs(2));
    let key = engine.lock_key("r");
    let held_on = |nodes: &[FakeNode]| nodes.iter().filter(|n| n.holder(&key).is_some()).count();
    tokio::time::advance(Duration::from_millis(2_900)).await;
    assert_eq!(held_on(&nodes), 5, "kept past the validity");
    let validity = engine.extend("r", &first.value, ttl).await.unwrap().expect("extended");
    assert!(validity <= ttl, "{validity:?}");
    tokio::time::advance(Duration::from_millis(2_900)).await;
    assert_eq!(held_on(&nodes), 5, "the extension kept the margin");
    tokio::time::advance(Duration::from_millis(200)).await;
    assert_eq!(held_on(&nodes), 0, "gone after ttl + lock_delay");
    let again = lease(
        engine
            .acquire("r", (Kind::Exclusive, lifetime), Duration::ZERO, pending(), ALONE, "")
            .await,
    );
    engine.release("r", &again.value).await.unwrap();
    assert_eq!(held_on(&nodes), 0, "a release frees it at once");
}

#[test]
fn a_malformed_suffix_is_refused_by_parse() {
    let hex = LockValue::random();
    for bad in ["+", "+0", "+-5", "+12345678901", "+5s", "+5+5"] {
        let s = format!("{}{bad}", hex.expose());
        assert!(LockValue::parse(&s).is_err(), "{bad:?} accepted");
    }
}
