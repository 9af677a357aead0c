//! Leader records (docs/design.md#elections): a record votes only beside the
//! lock that wrote it.

use super::*;

fn view(held: Option<&str>, record: Option<Vec<u8>>) -> RecordView {
    RecordView {
        value: held.map(str::to_owned),
        granted_ms: Some(5),
        record,
    }
}

#[test]
fn a_record_votes_only_beside_the_lock_that_wrote_it() {
    let value = LockValue::random();
    let written = record(&value, 42, "pod-a", b"10.0.0.1:80\nmore");
    let (held, leader) = vote(&view(Some(value.expose()), Some(written.clone()))).expect("a vote");
    assert_eq!(held, value.expose());
    assert_eq!(
        leader,
        Leader {
            term: 42,
            candidate: "pod-a".into(),
            value: b"10.0.0.1:80\nmore".to_vec(),
            since_ms: 5
        }
    );
    let other = LockValue::random();
    assert_eq!(vote(&view(Some(other.expose()), Some(written.clone()))), None);
    assert_eq!(vote(&view(None, Some(written))), None);
    assert_eq!(vote(&view(Some(value.expose()), None)), None);
}
