//! Who holds a lock: the record each master keeps in the lock key, after
//! the value (docs/design.md#who-holds-it). Written by the
//! scripts that grant, read by `Inspect` and `ListLocks`; never the value.

use std::time::Duration;

use super::node::KeyView;
use super::quorum;

/// The holder of a lock, as a majority of the masters recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The `owner` the acquisition named (may be empty).
    pub owner: String,
    /// The tenant it was taken for (empty without authentication).
    pub tenant: String,
    /// The daemon that granted it.
    pub daemon: String,
    /// When it was granted, in milliseconds since the Unix epoch on the
    /// masters' clocks (the earliest of the agreeing masters).
    pub since_ms: u64,
    /// Its fencing token, from the largest counter the agreeing masters
    /// granted it (the lease's token whenever every master that granted it
    /// agrees).
    pub fencing_token: u64,
    /// How long a majority still holds it: the quorum-th longest time left
    /// among the agreeing masters.
    pub ttl: Duration,
}

/// The part of the record the daemon writes (`daemon\ntenant\nowner`); the
/// script puts the counter it granted and the master's clock in front.
/// None of the three holds a newline (an owner is printable, a tenant name
/// and a daemon id are `[A-Za-z0-9_.:/-]`).
pub(crate) fn tag(daemon: &str, tenant: &str, owner: &str) -> String {
    let mut tag = String::with_capacity(daemon.len() + tenant.len() + owner.len() + 2);
    for (i, part) in [daemon, tenant, owner].into_iter().enumerate() {
        if i > 0 {
            tag.push('\n');
        }
        tag.push_str(part);
    }
    tag
}

/// One master's record: `counter\ngranted_ms\ndaemon\ntenant\nowner`.
struct Record<'a> {
    counter: u64,
    since_ms: u64,
    daemon: &'a str,
    tenant: &'a str,
    owner: &'a str,
}

fn parse(record: &str) -> Option<Record<'_>> {
    let mut parts = record.splitn(5, '\n');
    let counter = parts.next()?.parse().ok()?;
    let since_ms = parts.next()?.parse().ok()?;
    Some(Record {
        counter,
        since_ms,
        daemon: parts.next()?,
        tenant: parts.next()?,
        owner: parts.next()?,
    })
}

/// The lock value held by a majority of `views`, if any (values never
/// leave the engine), and how many hold the most common value.
pub(super) fn majority_value(views: &[Option<KeyView>]) -> (Option<&str>, usize) {
    let values: Vec<Option<&str>> = views
        .iter()
        .map(|v| v.as_ref().and_then(|v| v.value.as_deref()))
        .collect();
    let best = values
        .iter()
        .flatten()
        .max_by_key(|value| values.iter().filter(|v| v == &&Some(**value)).count())
        .copied();
    let agreeing = best.map_or(0, |m| values.iter().filter(|v| **v == Some(m)).count());
    (best, agreeing)
}

/// The holder agreed by a majority of `views` (one per node, `None` when
/// it did not answer), or `None` when no value is held by a majority.
pub(super) fn agreed(views: &[Option<KeyView>]) -> Option<Holder> {
    let (value, agreeing) = majority_value(views);
    if !quorum::majority(agreeing, views.len()) {
        return None;
    }
    let with_value: Vec<(usize, &KeyView)> = views
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.as_ref().map(|v| (i, v)))
        .filter(|(_, v)| v.value.as_deref() == value)
        .collect();
    let mut ttls: Vec<Duration> = with_value.iter().map(|(_, v)| v.ttl.unwrap_or_default()).collect();
    ttls.sort_unstable_by(|a, b| b.cmp(a));
    let ttl = ttls[quorum::quorum(views.len()) - 1];
    let records: Vec<(usize, Record<'_>)> = with_value
        .iter()
        .filter_map(|(i, v)| Some((*i, parse(v.holder.as_deref()?)?)))
        .collect();
    // The largest counter, with the highest index of a node that holds it:
    // never below the lease's own token, which took the lowest index among
    // the nodes that had answered when a quorum granted (a subset of these;
    // one that answered later may have the same counter at a lower index).
    let fencing_token = records
        .iter()
        .max_by_key(|(i, r)| (r.counter, *i))
        .map_or(0, |(i, r)| quorum::fencing_token(r.counter, *i));
    let first = records.first().map(|(_, r)| r);
    Some(Holder {
        owner: first.map_or("", |r| r.owner).to_owned(),
        tenant: first.map_or("", |r| r.tenant).to_owned(),
        daemon: first.map_or("", |r| r.daemon).to_owned(),
        since_ms: records.iter().map(|(_, r)| r.since_ms).min().unwrap_or(0),
        fencing_token,
        ttl,
    })
}

#[cfg(test)]
#[path = "holder_tests.rs"]
mod tests;
