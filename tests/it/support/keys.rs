//! The Redis keys of a lock under the default prefix (docs/design.md#keys),
//! for tests that look at or change a master directly.

use redlockd::redlock::buckets;

/// The prefix every test daemon uses.
pub const PREFIX: &str = "redlockd";

/// The key of lock name `name` (`lock:<resource>`, ...).
pub fn lock(name: &str) -> String {
    buckets::key(PREFIX, name)
}

/// The key of the lock on `resource` (no tenant).
pub fn of(resource: &str) -> String {
    lock(&format!("lock:{resource}"))
}

/// Key `what` (`waiting:`, `readers:`, ...) beside the lock named `name`.
pub fn beside(name: &str, what: &str) -> String {
    let key = lock(name);
    let (start, name) = buckets::split(&key).unwrap();
    format!("{start}{what}{name}")
}

/// The fence counter of the bucket of lock name `name`.
pub fn fence(name: &str) -> String {
    bucket_key(name, "fence")
}

/// The verified marker of the bucket of lock name `name`.
pub fn marker(name: &str) -> String {
    bucket_key(name, "verified")
}

fn bucket_key(name: &str, what: &str) -> String {
    let key = lock(name);
    format!("{}{what}", buckets::split(&key).unwrap().0)
}

/// A key in the bucket of lock name `name`, named `rest` (many locks in
/// one bucket, to share its counter).
pub fn in_bucket_of(name: &str, rest: &str) -> String {
    let key = lock(name);
    format!("{}{rest}", buckets::split(&key).unwrap().0)
}

/// Every bucket, none raised: what a repair that only marks the data
/// verified is given (as the monitor's adoption).
pub fn every_bucket() -> Vec<(u16, Option<u64>)> {
    (0..redlockd::redlock::buckets::BUCKETS).map(|b| (b, None)).collect()
}
