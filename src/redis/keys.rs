//! The keys beside a lock key in its bucket (docs/design.md#keys): a lock
//! key is `<prefix>:{<tag>}:<name>`, and its waiting mark, readers and
//! number of permits, and its bucket's fence counter and verified marker,
//! are `<prefix>:{<tag>}:` followed by what they are, so one script on
//! them touches one Redis Cluster slot; and keys grouped by slot.

use crate::redlock::buckets;

/// `<prefix>:{<tag>}:` and the lock name of `key` (a key without a bucket
/// is taken as a name without a start; the engine makes no such key).
fn split(key: &str) -> (&str, &str) {
    buckets::split(key).unwrap_or(("", key))
}

/// `<start><what><name>`: the key named for lock `key`, `what` saying
/// which (`waiting:`, `readers:`, `permits:`). One allocation of the right
/// size (not `format!`): several per lock request (docs/performance.md,
/// workload (b)).
pub(super) fn beside(key: &str, what: &str) -> String {
    let (start, name) = split(key);
    joined(start, what, name)
}

/// The bucket's key `what` (`fence`, `verified`) for lock `key`.
pub(super) fn of_bucket(key: &str, what: &str) -> String {
    joined(split(key).0, what, "")
}

/// The key remembering the number of permits of the semaphore whose slot
/// key is `slot_key` (`<start>permit:<slot>:<name>`): `<start>permits:<name>`.
pub(super) fn permits_of_slot(slot_key: &str) -> String {
    let (start, name) = split(slot_key);
    joined(start, "permits:", buckets::owner_name(name))
}

/// The fence counter and the verified marker of bucket `bucket`.
pub(super) fn bucket_keys(prefix: &str, bucket: u16) -> [String; 2] {
    let start = format!("{prefix}:{{{}}}:", buckets::tag(bucket));
    [joined(&start, "fence", ""), joined(&start, "verified", "")]
}

/// The single fence counter of the layout before buckets
/// (docs/design.md#keys): read once more by every repair, so each bucket's
/// counter starts above it.
pub(super) fn legacy_fence(prefix: &str) -> String {
    format!("{prefix}:fence")
}

fn joined(start: &str, what: &str, name: &str) -> String {
    let mut key = String::with_capacity(start.len() + what.len() + name.len());
    key.push_str(start);
    key.push_str(what);
    key.push_str(name);
    key
}

/// The indices of `items` grouped by the slot of `key_of` each, in the
/// order of each group's first item.
pub(super) fn slot_groups<T>(items: &[T], key_of: impl Fn(&T) -> &str) -> Vec<(u16, Vec<usize>)> {
    let mut groups: Vec<(u16, Vec<usize>)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let slot = buckets::slot(key_of(item));
        match groups.iter_mut().find(|(s, _)| *s == slot) {
            Some((_, at)) => at.push(i),
            None => groups.push((slot, vec![i])),
        }
    }
    groups
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
