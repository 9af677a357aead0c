//! Lock values (docs/design.md#the-fencing-token): unique, well formed, hidden
//! from logs, saying their mode and slot, other formats refused.

use super::*;

#[test]
fn values_are_unique_well_formed_and_hidden_from_logs() {
    let a = LockValue::random();
    let b = LockValue::random();
    assert_ne!(a, b);
    assert_eq!(LockValue::parse(a.expose()), Ok(a.clone()));
    assert!(!format!("{a:?}").contains(a.expose()));
}

#[test]
fn values_drawn_across_many_fetches_never_repeat() {
    let count = VALUES_PER_FETCH * 5 + 3;
    let mut seen: std::collections::HashSet<String> =
        (0..count).map(|_| LockValue::random().expose().to_owned()).collect();
    assert_eq!(seen.len(), count, "a lock value repeated");
    // A value of zeroed (used) bytes would be all zeros.
    assert!(!seen.remove(&"0".repeat(2 * VALUE_BYTES)));
}

#[test]
fn a_value_says_its_mode() {
    let shared = LockValue::random_for(Mode::Shared);
    assert_eq!((shared.mode(), shared.expose().len()), (Mode::Shared, 41));
    assert_eq!(LockValue::parse(shared.expose()), Ok(shared.clone()));
    assert_eq!(LockValue::random_for(Mode::Exclusive).mode(), Mode::Exclusive);
    assert_eq!(LockValue::random().mode(), Mode::Exclusive);
}

#[test]
fn a_permit_value_says_its_slot() {
    let value = LockValue::random_permit(Permit { of: 12, slot: 7 });
    assert_eq!(value.permit(), Some(Permit { of: 12, slot: 7 }));
    assert_eq!(value.mode(), Mode::Exclusive);
    assert!(value.expose().starts_with("p12.7."));
    assert_eq!(LockValue::parse(value.expose()), Ok(value));
    assert_eq!(LockValue::random().permit(), None);
    let hex = "a".repeat(40);
    for bad in [
        format!("p1.0.{hex}"),
        format!("p3.3.{hex}"),
        format!("p3..{hex}"),
        format!("p3.1{hex}"),
        format!("p+3.1.{hex}"),
        format!("p3.1.{hex}a"),
        format!("p999999.1.{hex}"),
    ] {
        assert!(LockValue::parse(&bad).is_err(), "{bad:?} was accepted");
    }
}

#[test]
fn values_in_another_format_are_refused() {
    let after_r = format!("r{}", "a".repeat(41));
    for bad in [
        "",
        "abc",
        &"A".repeat(40),
        &"g".repeat(40),
        &"a".repeat(41),
        "r",
        &after_r,
        &format!("x{}", "a".repeat(40)),
    ] {
        assert!(LockValue::parse(bad).is_err(), "{bad:?} was accepted");
    }
}
