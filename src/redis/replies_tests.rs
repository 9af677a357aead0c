//! What Redis answers, read back: every reply shape the scripts produce.

use fred::bytes::Bytes;
use fred::types::{Key, Map};

#[test]
fn hand_off_is_held_and_counter_or_an_error() {
    let reply = |was: i64, counter: i64, waited: i64| {
        Value::Array(vec![
            Value::Integer(was),
            Value::Integer(counter),
            Value::Integer(waited),
        ])
    };
    let swap = |was_held, counter, waited| {
        Ok(Swap {
            was_held,
            counter,
            waited,
        })
    };
    assert_eq!(hand_off(reply(1, 42, 0)), swap(true, Some(42), false));
    assert_eq!(hand_off(reply(0, 0, 1)), swap(false, None, true));
    assert_eq!(hand_off(reply(1, 0, 0)), swap(true, None, false));
    for bad in [
        reply(2, 5, 0),
        reply(1, -3, 0),
        reply(1, 5, 2),
        Value::Integer(1),
        Value::Array(vec![Value::Integer(1), Value::Integer(5)]),
    ] {
        assert!(hand_off(bad.clone()).is_err(), "{bad:?}");
    }
}

use super::*;

fn s(text: &str) -> Value {
    Value::from(text)
}

fn array(parts: Vec<Value>) -> Value {
    Value::Array(parts)
}

fn err<T: std::fmt::Debug>(r: Result<T, NodeError>) -> String {
    r.expect_err("a malformed reply was accepted").to_string()
}

#[test]
fn a_round_batch_reads_one_integer_per_request_and_each_its_own_way() {
    let reply = array(vec![
        Value::Integer(1_700_000_000_000_042),
        Value::Integer(0),
        Value::Integer(-3),
    ]);
    assert_eq!(round(reply, 3), Ok(vec![1_700_000_000_000_042, 0, -3]));
    assert_eq!(round(array(vec![]), 0), Ok(vec![]));
    for (bad, count) in [
        (array(vec![Value::Integer(1)]), 2),
        (array(vec![Value::Null]), 1),
        (array(vec![s("5")]), 1),
        (Value::Integer(5), 1),
    ] {
        assert!(err(round(bad, count)).contains("unexpected round reply"));
    }
    assert_eq!(
        locked(1_700_000_000_000_042),
        Ok(Locked::Granted(1_700_000_000_000_042))
    );
    let refusals = [0, -1, -2, -3].map(|n| locked(n).unwrap());
    let expected = [Locked::Taken, Locked::NotVerified, Locked::Changed, Locked::CounterFull];
    assert_eq!(refusals, expected);
    assert!(err(locked(-4)).contains("unexpected lock answer"));
    assert_eq!((released(1), released(0)), (Ok(true), Ok(false)));
    for bad in [2, -1] {
        assert!(err(released(bad)).contains("unexpected release answer"));
    }
}

#[test]
fn flags_are_0_or_1() {
    assert_eq!(flag(Value::Integer(1)), Ok(true));
    assert_eq!(flag(Value::Integer(0)), Ok(false));
    for bad in [
        Value::Integer(2),
        Value::Integer(-1),
        Value::Null,
        s("1"),
        Value::Boolean(true),
    ] {
        assert!(err(flag(bad)).contains("expected 0 or 1"));
    }
}

#[test]
fn inspect_reads_value_record_ttl_and_fence() {
    let held = array(vec![
        s("abc\n7\n9\nd\nt\no"),
        Value::Integer(1500),
        s("1700000000000042"),
        Value::Integer(0),
        s("4"),
    ]);
    assert_eq!(
        inspect(held),
        Ok(KeyView {
            value: Some("abc".into()),
            ttl: Some(Duration::from_millis(1500)),
            fence: Some(1_700_000_000_000_042),
            holder: Some("7\n9\nd\nt\no".into()),
            readers: 0,
            permits: Some(4),
        })
    );
    // Missing key (-2) on a node with no counter yet; Lua false is nil.
    let free = array(vec![
        Value::Null,
        Value::Integer(-2),
        Value::Null,
        Value::Integer(0),
        Value::Null,
    ]);
    assert_eq!(inspect(free), Ok(KeyView::default()));
    // A key without expiry (-1) has no time left to report; a key from
    // before holder records has none.
    let forever = array(vec![
        Value::Bytes(Bytes::from_static(b"v")),
        Value::Integer(-1),
        Value::Integer(7),
        Value::Integer(3),
        Value::Null,
    ]);
    assert_eq!(
        inspect(forever),
        Ok(KeyView {
            value: Some("v".into()),
            ttl: None,
            fence: Some(7),
            holder: None,
            readers: 3,
            permits: None,
        })
    );
}

#[test]
fn inspect_refuses_other_shapes_without_showing_the_value() {
    let secret = "0123456789abcdef0123456789abcdef01234567";
    let cases = [
        (s(secret), "a string of 40 bytes"),
        (Value::Null, "nil"),
        (array(vec![s(secret), Value::Integer(5)]), "2 elements"),
        (array(vec![s(secret), Value::Integer(5), Value::Null]), "3 elements"),
        (array(vec![Value::Null; 6]), "6 elements"),
    ];
    // Five elements, one of them wrong.
    let five = |i: usize, wrong: Value| {
        let mut parts = vec![
            s(secret),
            Value::Integer(5),
            Value::Null,
            Value::Integer(0),
            Value::Null,
        ];
        parts[i] = wrong;
        array(parts)
    };
    let cases = cases.into_iter().chain([
        (five(1, s("5")), "PTTL"),
        (five(0, Value::Integer(3)), "lock value"),
        (five(0, Value::Bytes(Bytes::from_static(&[0xff]))), "not UTF-8"),
        (five(2, s("-3")), "fence counter"),
        (five(2, Value::Integer(-3)), "-3"),
        (five(2, s("1e5")), "fence counter"),
        (five(3, Value::Integer(-1)), "readers"),
        (five(3, s("2")), "readers"),
        (five(4, s("x")), "permits"),
        (five(4, Value::Integer(-2)), "permits"),
    ]);
    for (reply, expected) in cases {
        let e = err(inspect(reply));
        assert!(e.contains("inspect reply") && e.contains(expected), "{e}");
        assert!(!e.contains(secret), "the lock value leaked into {e}");
    }
}

#[test]
fn fence_is_a_non_negative_integer_or_nil() {
    assert_eq!(fence(Value::Null), Ok(None));
    assert_eq!(fence(s("0")), Ok(Some(0)));
    assert_eq!(fence(s("18446744073709551615")), Ok(Some(u64::MAX)));
    assert_eq!(fence(Value::Integer(42)), Ok(Some(42)));
    for bad in [
        s("-1"),
        s("+1"),
        s(" 1"),
        s(""),
        s("18446744073709551616"),
        s("1.5"),
        Value::Integer(-1),
        Value::Double(1.0),
        array(vec![s("1")]),
    ] {
        assert!(err(fence(bad)).contains("expected a non-negative integer"));
    }
}

#[test]
fn marker_is_a_string_or_nil() {
    assert_eq!(marker(Value::Null), Ok(None));
    assert_eq!(marker(s("run:replid")), Ok(Some("run:replid".into())));
    assert!(err(marker(Value::Integer(1))).contains("verified marker"));
}

#[test]
fn time_is_seconds_and_microseconds() {
    let t = |a: Value, b: Value| time(array(vec![a, b]));
    assert_eq!(t(s("1700000000"), s("123456")), Ok(1_700_000_000_123_456));
    assert_eq!(t(Value::Integer(0), Value::Integer(999_999)), Ok(999_999));
    let max_secs = u64::MAX / 1_000_000;
    assert_eq!(t(s(&max_secs.to_string()), s("0")), Ok(max_secs * 1_000_000));
    for (bad, expected) in [
        (t(s("-1"), s("0")), "TIME seconds"),
        (t(s("1"), s("-5")), "TIME microseconds"),
        (t(Value::Integer(-1), s("0")), "TIME seconds: -1"),
        (t(s("1"), s("1000000")), "expected below 1000000"),
        (t(s(&(max_secs + 1).to_string()), s("0")), "out of range"),
        (t(s(&u64::MAX.to_string()), s("999999")), "out of range"),
        (time(array(vec![s("1")])), "1 elements"),
        (time(s("1700000000")), "a string of 10 bytes"),
    ] {
        let e = err(bad);
        assert!(e.contains("unexpected TIME") && e.contains(expected), "{e}");
    }
}

#[test]
fn config_get_reads_pairs_or_a_map() {
    let name = "maxmemory-policy";
    assert_eq!(
        config_get(array(vec![s(name), s("noeviction")]), name),
        Ok("noeviction".into())
    );
    let mut map = Map::new();
    map.insert(Key::from(name), s("allkeys-lru"));
    assert_eq!(config_get(Value::Map(map), name), Ok("allkeys-lru".into()));
    // An unknown parameter: an empty reply.
    assert_eq!(config_get(array(vec![]), name), Ok(String::new()));
    assert_eq!(config_get(Value::Map(Map::new()), name), Ok(String::new()));
    for bad in [
        array(vec![s(name)]),
        array(vec![s(name), Value::Integer(1)]),
        Value::Integer(1),
        s("noeviction"),
    ] {
        assert!(err(config_get(bad, name)).contains("unexpected CONFIG GET reply"));
    }
}

#[test]
fn info_fields_are_read_from_the_text() {
    let text = "# Server\r\nredis_version:7.0.15\r\nrun_id:abc123\r\nuptime_in_seconds:3600\r\n\
                # Replication\r\nrole:master\r\nmaster_replid:def456\r\nmaster_replid2:000\r\n";
    assert_eq!(
        info(s(text)),
        Ok(Info {
            role: "master".into(),
            run_id: "abc123".into(),
            master_replid: "def456".into(),
            uptime: Duration::from_secs(3600),
            major_version: 7,
        })
    );
    assert_eq!(info_text("redis_version:6.2.14\r\n").major_version, 6);
    // Missing or garbled fields are empty / zero: the health rules refuse
    // or quarantine such a node.
    assert_eq!(info_text(""), Info::default());
    assert_eq!(info_text("uptime_in_seconds:-5\nuptime_in_seconds:9"), Info::default());
    assert_eq!(info_text("role :master\nrolex:y").role, "");
    assert!(err(info(Value::Integer(1))).contains("INFO reply"));
    assert!(err(info(Value::Bytes(Bytes::from_static(&[0xc3])))).contains("not UTF-8"));
}
