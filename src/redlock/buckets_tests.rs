//! Buckets (docs/design.md#keys): CRC16 and slots as Redis Cluster's, a slot
//! per bucket, golden vectors, keys split after their bucket.

use super::*;

#[test]
fn crc16_and_slots_are_redis_clusters() {
    // Published values: CRC16/XMODEM("123456789") and CLUSTER KEYSLOT.
    assert_eq!(crc16(b"123456789"), 0x31C3);
    assert_eq!(slot("foo"), 12182);
    assert_eq!(slot("{foo}.bar"), 12182);
    assert_eq!(
        slot("{}foo"),
        crc16(b"{}foo") % BUCKETS,
        "an empty tag hashes the whole key"
    );
}

#[test]
fn every_bucket_has_its_own_slot() {
    let mut seen = vec![false; usize::from(BUCKETS)];
    for b in 0..BUCKETS {
        let t = tag(b);
        assert!(
            !t.is_empty() && t.len() <= 4 && t.bytes().all(|c| TAG_ALPHABET.contains(&c)),
            "{t}"
        );
        assert_eq!(slot(&format!("x:{{{t}}}:y")), b);
        seen[usize::from(b)] = true;
    }
    assert!(seen.iter().all(|s| *s));
}

/// Frozen for good (docs/design.md#keys): a failure here means every
/// deployed lock and counter would move. (The values were computed
/// apart from this code too, by a few lines of Python: SHA-256 and
/// CRC16/XMODEM from their definitions.)
#[test]
fn golden_vectors() {
    let digest = ring::digest::digest(&ring::digest::SHA256, tags().join(",").as_bytes());
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, "7f86067662df7528834aac4ae3af3190b457b00f5390ababd04f5ec7b99ffc11");
    let vectors = [
        ("lock:orders", 3153, "9x6", 3153),
        ("lock:r", 15924, "n2", 15924),
        ("tenant:alpha:lock:shared/orders", 8567, "637", 8567),
        ("permit:3:lock:pool", 8292, "2m4", 8292),
        ("permits:lock:pool", 8292, "2m4", 8292),
    ];
    let got: Vec<(&str, u16, &str, u16)> = vectors
        .iter()
        .map(|(name, ..)| {
            let b = bucket(name);
            (*name, b, tag(b), slot(&key("redlockd", name)))
        })
        .collect();
    assert_eq!(got, vectors);
    assert_eq!((tag(0), tag(16383)), ("1bz", "hia"));
}

#[test]
fn keys_carry_their_bucket_and_split_after_it() {
    let k = key("redlockd", "lock:a:b");
    let (start, name) = split(&k).unwrap();
    assert_eq!(name, "lock:a:b");
    assert_eq!(start, format!("redlockd:{{{}}}:", tag(bucket("lock:a:b"))));
    assert_eq!(split("redlockd:lock:a"), None);
    // A semaphore's keys are in its bucket.
    for name in ["permit:0:lock:s", "permit:63:lock:s", "permits:lock:s"] {
        assert_eq!(bucket(name), bucket("lock:s"));
    }
    assert_eq!(owner_name("permit:7:tenant:t:lock:x"), "tenant:t:lock:x");
}
