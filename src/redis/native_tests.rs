use std::time::Duration;

use fred::prelude::Value;

use super::{Stored, text};
fn keys(name: &str) -> [String; 4] {
    ["lock:", "waiting:lock:", "fence", "verified"].map(|what| format!("redlockd:{{a}}:{what}{name}"))
}

fn lock(value: &str, ttl_ms: i64, holder: &str) -> ([String; 4], [Value; 4]) {
    let args = [
        Value::from("L"),
        Value::from(value),
        Value::Integer(ttl_ms),
        Value::from(holder),
    ];
    (keys("r"), args)
}

#[test]
fn a_grant_is_kept_whole_until_its_release_takes_it() {
    let stored = Stored::default();
    stored.granted("v1", 42, 1_700_000_000_123, "d\nt\no", Duration::from_secs(10));
    assert_eq!(stored.take("v1").as_deref(), Some("v1\n42\n1700000000123\nd\nt\no"));
    assert_eq!(stored.take("v1"), None, "taken twice");
    assert_eq!(stored.len(), 0);
}

#[test]
fn only_granted_locks_of_a_batch_are_recorded() {
    let stored = Stored::default();
    let requests = [
        lock("granted", 10_000, "h"),
        lock("refused", 10_000, "h"),
        lock("unverified", 10_000, "h"),
        (
            keys("s"),
            [
                Value::from("W"),
                Value::from("released"),
                Value::from(""),
                Value::from(""),
            ],
        ),
    ];
    let requests: Vec<_> = requests.iter().map(|(k, a)| (k, a)).collect();
    stored.granted_in(&requests, &[7, 0, -1, 1], 99);
    assert_eq!(stored.len(), 1);
    assert_eq!(stored.take("granted").as_deref(), Some("granted\n7\n99\nh"));
}

#[test]
fn expired_records_are_swept_as_the_map_grows() {
    let stored = Stored::default();
    for i in 0..3000 {
        stored.granted(&format!("gone{i}"), 1, 1, "h", Duration::ZERO);
    }
    assert!(stored.len() < 2048, "{} expired records kept", stored.len());
    let live = Stored::default();
    for i in 0..3000 {
        live.granted(&format!("live{i}"), 1, 1, "h", Duration::from_secs(60));
    }
    assert_eq!(live.len(), 3000, "a live record was swept");
}

#[test]
fn text_reads_string_arguments_only() {
    assert_eq!(text(&Value::from("W")), Some("W"));
    assert_eq!(text(&Value::Integer(1)), None);
}
