use super::*;

fn limits() -> Limits {
    Limits {
        default_ttl: Duration::from_secs(10),
        min_ttl: Duration::from_millis(250),
        max_ttl: Duration::from_secs(60),
        max_wait: Duration::from_secs(60),
        max_hold: Duration::from_secs(3600),
        max_permits: 64,
        max_lock_delay: Duration::from_secs(60),
    }
}

fn pd(seconds: i64, nanos: i32) -> Option<pbjson_types::Duration> {
    Some(pbjson_types::Duration { seconds, nanos })
}

fn field_of(e: Error) -> &'static str {
    match e {
        Error::InvalidArgument { field, .. } => field,
        other => panic!("not an invalid argument: {other:?}"),
    }
}

#[test]
fn ttls_are_checked_against_the_configured_range() {
    let l = limits();
    assert_eq!(l.ttl("ttl", None), Ok(Duration::from_secs(10)));
    assert_eq!(l.ttl("ttl", pd(1, 0)), Ok(Duration::from_secs(1)));
    for bad in [
        pd(0, 0),
        pd(0, 1_000),
        pd(61, 0),
        pd(-1, 0),
        pd(1, -5),
        pd(1, 2_000_000_000),
    ] {
        let err = l.ttl("ttl", bad).unwrap_err();
        assert!(err.to_string().contains("ttl"), "{err}");
        assert_eq!(field_of(err), "ttl");
    }
    let err = l.ttl("ttl", pd(61, 0)).unwrap_err().to_string();
    assert!(err.contains("[250ms, 1m]"), "{err}");
}

#[test]
fn waits_are_bounded_by_max_wait() {
    let l = limits();
    assert_eq!(l.wait(None), Ok(Duration::ZERO));
    assert_eq!(l.wait(pd(60, 0)), Ok(Duration::from_secs(60)));
    assert_eq!(field_of(l.wait(pd(60, 1)).unwrap_err()), "wait");
    assert_eq!(field_of(l.wait(pd(-1, 0)).unwrap_err()), "wait");
}

#[test]
fn resources_must_be_1_to_256_printable_bytes() {
    assert!(resource("orders/42").is_ok());
    assert!(resource(&"é".repeat(128)).is_ok());
    for bad in [
        String::new(),
        "x".repeat(257),
        "a\nb".into(),
        "tab\there".into(),
        "nul\0".into(),
    ] {
        assert_eq!(field_of(resource(&bad).unwrap_err()), "resource", "{bad:?}");
    }
}

#[test]
fn modes_outside_the_enum_are_refused_naming_both() {
    assert_eq!(mode(0), Ok(Mode::Exclusive));
    assert_eq!(mode(1), Ok(Mode::Shared));
    for bad in [2, -1, 99] {
        let err = mode(bad).unwrap_err();
        assert_eq!(field_of(err.clone()), "mode");
        assert!(err.to_string().contains("LOCK_MODE_SHARED (1)"), "{err}");
    }
}

#[test]
fn permits_are_bounded_and_never_shared() {
    let l = limits();
    assert_eq!(l.kind(0, 0), Ok(Kind::Exclusive));
    assert_eq!(l.kind(0, 1), Ok(Kind::Exclusive));
    assert_eq!(l.kind(1, 1), Ok(Kind::Shared));
    assert_eq!(l.kind(0, 64), Ok(Kind::Permits(64)));
    let above = l.kind(0, 65).unwrap_err();
    assert!(above.to_string().contains("maximum of 64"), "{above}");
    assert_eq!(field_of(above), "permits");
    let shared = l.kind(1, 3).unwrap_err();
    assert!(shared.to_string().contains("shared lock takes no permits"), "{shared}");
    assert_eq!(field_of(shared), "permits");
    assert_eq!(field_of(l.kind(5, 3).unwrap_err()), "mode");
}

#[test]
fn reentrancy_keys_are_at_most_128_bytes_and_never_shown() {
    assert_eq!(reentrancy_key(""), Ok(None));
    assert_eq!(reentrancy_key("trace-1"), Ok(Some("trace-1")));
    assert!(reentrancy_key(&"k".repeat(128)).is_ok());
    let long = "s3cret-".repeat(20);
    let err = reentrancy_key(&long).unwrap_err();
    assert!(
        err.to_string().contains("140 bytes") && !err.to_string().contains("s3cret"),
        "{err}"
    );
    assert_eq!(field_of(err), "reentrancy_key");
}

#[test]
fn a_set_has_1_to_16_valid_members() {
    let names = |n: usize| (0..n).map(|i| format!("r{i}")).collect::<Vec<_>>();
    assert!(resources(&names(1)).is_ok() && resources(&names(16)).is_ok());
    for bad in [names(0), names(17)] {
        let err = resources(&bad).unwrap_err();
        assert!(err.to_string().contains("1 to 16"), "{err}");
        assert_eq!(field_of(err), "resources");
    }
    let err = resources(&["ok".into(), "tab\there".into()]).unwrap_err();
    assert!(err.to_string().contains("[1]"), "{err}");
    assert_eq!(field_of(err), "resources");
}

#[test]
fn owners_and_values_are_checked_too() {
    assert!(owner("").is_ok());
    assert_eq!(field_of(owner(&"o".repeat(257)).unwrap_err()), "owner");
    assert_eq!(field_of(value("not-a-value").unwrap_err()), "value");
}
