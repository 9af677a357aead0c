//! The key layout (docs/design.md#keys): every key of one lock carries the
//! hash tag of its bucket, `<prefix>:{<tag>}:<lock name>`, so the lock key,
//! its waiting mark, readers, permits, the bucket's fence counter and its
//! verified marker hash to one Redis Cluster slot and every script touches
//! one slot. A lock name's bucket is a hash of its tenant and resource
//! (the name holds both) modulo `BUCKETS`; bucket `b`'s tag is the first
//! string (by length, then in alphabet order over `0-9a-z`) whose CRC16
//! lands in slot `b`. Both are frozen for good: the golden vectors below
//! pin them, and a change would move every lock and counter.

use std::sync::OnceLock;

/// How many buckets: Redis Cluster's slots, one bucket each.
pub const BUCKETS: u16 = 16384;

/// The characters of a tag.
const TAG_ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";

/// The lock name a bucket is chosen by: a semaphore's slots
/// (`permit:<slot>:<name>`) and its number of permits (`permits:<name>`)
/// live in the semaphore's bucket. (No lock name starts with `permit`:
/// they start with `lock:` or `tenant:`.)
pub fn owner_name(name: &str) -> &str {
    if let Some(rest) = name.strip_prefix("permit:") {
        return rest.split_once(':').map_or(rest, |(_, owner)| owner);
    }
    name.strip_prefix("permits:").unwrap_or(name)
}

/// The bucket of lock name `name`: the first eight bytes of the SHA-256 of
/// its owner's name, big-endian, modulo `BUCKETS`.
pub fn bucket(name: &str) -> u16 {
    let digest = ring::digest::digest(&ring::digest::SHA256, owner_name(name).as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest.as_ref()[..8]);
    (u64::from_be_bytes(first) % u64::from(BUCKETS)) as u16
}

/// The hash tag of `bucket` (without braces): CRC16 of it is `bucket`.
pub fn tag(bucket: u16) -> &'static str {
    &tags()[usize::from(bucket % BUCKETS)]
}

/// The Redis key of lock name `name` under `prefix`:
/// `<prefix>:{<tag>}:<name>`.
pub fn key(prefix: &str, name: &str) -> String {
    let tag = tag(bucket(name));
    let mut key = String::with_capacity(prefix.len() + tag.len() + name.len() + 4);
    key.push_str(prefix);
    key.push_str(":{");
    key.push_str(tag);
    key.push_str("}:");
    key.push_str(name);
    key
}

/// A key split after its bucket: `(<prefix>:{<tag>}:, <name>)`; `None`
/// for a key without a tag.
pub fn split(key: &str) -> Option<(&str, &str)> {
    let open = key.find(":{")?;
    let close = open + key[open..].find("}:")?;
    Some(key.split_at(close + 2))
}

/// Redis Cluster's slot of `key`: CRC16 (XMODEM) of its hash tag (the text
/// between the first `{` and the next `}`, when not empty), else of the
/// whole key, modulo 16384.
pub fn slot(key: &str) -> u16 {
    let bytes = key.as_bytes();
    let hashed = bytes
        .iter()
        .position(|b| *b == b'{')
        .and_then(|open| {
            let len = bytes[open + 1..].iter().position(|b| *b == b'}')?;
            (len > 0).then(|| &bytes[open + 1..open + 1 + len])
        })
        .unwrap_or(bytes);
    crc16(hashed) % BUCKETS
}

/// CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), Redis Cluster's.
fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for byte in bytes {
        crc ^= u16::from(*byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// Every bucket's tag, found once: strings of one, two, three then four
/// characters, each in alphabet order, the first to land in a slot taking
/// it (four characters cover every slot).
fn tags() -> &'static [String] {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    TAGS.get_or_init(|| {
        let mut tags = vec![String::new(); usize::from(BUCKETS)];
        let mut left = usize::from(BUCKETS);
        let mut text = Vec::with_capacity(4);
        for len in 1..=4u32 {
            for mut n in 0..TAG_ALPHABET.len().pow(len) {
                text.clear();
                for _ in 0..len {
                    text.push(TAG_ALPHABET[n % TAG_ALPHABET.len()]);
                    n /= TAG_ALPHABET.len();
                }
                text.reverse();
                let slot = usize::from(crc16(&text) % BUCKETS);
                if tags[slot].is_empty() {
                    tags[slot] = String::from_utf8_lossy(&text).into_owned();
                    left -= 1;
                    if left == 0 {
                        return tags;
                    }
                }
            }
        }
        unreachable!("four characters cover every slot (the golden vectors check it)")
    })
}

#[cfg(test)]
#[path = "buckets_tests.rs"]
mod tests;
