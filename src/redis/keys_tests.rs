//! Key layout (docs/design.md#keys): every key of a lock in its bucket.

use super::*;

#[test]
fn every_key_of_a_lock_is_in_its_bucket() {
    let key = buckets::key("redlockd", "tenant:t:lock:a:b");
    let slot = buckets::slot(&key);
    let start = key.strip_suffix("tenant:t:lock:a:b").unwrap();
    assert_eq!(beside(&key, "waiting:"), format!("{start}waiting:tenant:t:lock:a:b"));
    assert_eq!(of_bucket(&key, "fence"), format!("{start}fence"));
    let slot_key = buckets::key("redlockd", "permit:5:tenant:t:lock:a:b");
    assert_eq!(permits_of_slot(&slot_key), format!("{start}permits:tenant:t:lock:a:b"));
    let b = buckets::bucket("tenant:t:lock:a:b");
    let [fence, marker] = bucket_keys("redlockd", b);
    assert_eq!(fence, of_bucket(&key, "fence"));
    assert_eq!(marker, of_bucket(&key, "verified"));
    for k in [
        beside(&key, "waiting:"),
        beside(&key, "readers:"),
        fence,
        marker,
        slot_key,
        permits_of_slot(&key),
    ] {
        assert_eq!(buckets::slot(&k), slot, "{k}");
    }
}
