//! The leader record's reads (docs/design.md#elections): a held lock and its
//! record read apart, a free or shared lock without a value.

use super::*;

#[test]
fn a_held_lock_and_its_record_are_read_apart() {
    let reply = Value::Array(vec![
        Value::from("v1\n7\n1700000000123\nd/abc\nt\nowner"),
        Value::Bytes(b"v1\nrest".to_vec().into()),
    ]);
    let view = record_view(reply).unwrap();
    assert_eq!(view.value.as_deref(), Some("v1"));
    assert_eq!(view.granted_ms, Some(1_700_000_000_123));
    assert_eq!(view.record.as_deref(), Some(&b"v1\nrest"[..]));
}

#[test]
fn a_free_or_shared_lock_has_no_value() {
    let free = record_view(Value::Array(vec![Value::Null, Value::Null])).unwrap();
    assert_eq!(free, RecordView::default());
    let shared = record_view(Value::Array(vec![Value::from("\tshared"), Value::Null])).unwrap();
    assert_eq!(shared.value, None);
    assert!(record_view(Value::Integer(1)).is_err());
}
