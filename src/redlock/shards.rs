//! Quarantine per shard of a position that is a Redis Cluster
//! (docs/design.md#cluster-positions): the buckets a primary serves are held
//! out of acquire quorums when that primary restarted, when a replica was
//! promoted in its place, or when their slots moved to it; and buckets whose
//! data no marker vouches for are repaired before they count again. The
//! position's other buckets keep their vote.

use std::time::Duration;

use tokio::time::Instant;

use super::buckets::BUCKETS;
use super::rules::{Rules, latest_start};

/// One primary of a cluster position as a probe saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardSeen {
    /// `host:port` of the primary.
    pub address: String,
    /// The slot ranges (inclusive) it serves; a bucket is a slot.
    pub ranges: Vec<(u16, u16)>,
    /// `run_id:master_replid`.
    pub identity: String,
    /// `uptime_in_seconds`.
    pub uptime: Duration,
    /// The markers of its buckets name it (its first bucket's; every
    /// bucket's after a script found one unverified).
    pub verified: bool,
}

impl ShardSeen {
    fn buckets(&self) -> impl Iterator<Item = u16> + '_ {
        self.ranges.iter().flat_map(|(a, b)| *a..=*b)
    }
}

/// One primary of a cluster position, as the status page shows it
/// (docs/design.md#cluster-positions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Primary {
    /// `host:port`.
    pub address: String,
    /// How many buckets (slots) it serves.
    pub buckets: usize,
    /// How many of those are held out or being repaired.
    pub buckets_out: usize,
}

/// A primary as the last probe saw it.
#[derive(Debug)]
struct Known {
    address: String,
    identity: String,
    /// The latest possible start of its process (see `standing::Memory`).
    started_by: Option<Instant>,
    /// Its unverified marker was already counted as an event.
    unverified_seen: bool,
}

/// Buckets held out until a time, and why.
#[derive(Debug, Clone)]
struct Hold {
    ranges: Vec<(u16, u16)>,
    until: Instant,
    reason: String,
}

/// What the probes remember of a cluster position's shards.
#[derive(Debug, Default)]
pub(crate) struct Shards {
    known: Vec<Known>,
    /// Per bucket, the index in `known` of the primary that served it.
    owner: Vec<u16>,
    holds: Vec<Hold>,
    /// Per bucket: no marker vouches for its data; repaired (or, with
    /// quarantine off, adopted) before it counts.
    unrepaired: Vec<bool>,
    /// A hold or an unrepaired bucket, as of the last probe or repair
    /// (kept because every lock request asks; `settle`).
    unsettled: bool,
}

const NOBODY: u16 = u16::MAX;

impl Shards {
    /// Applies the rules to the primaries a probe saw.
    pub(crate) fn assess(&mut self, seen: &[ShardSeen], rules: &Rules, now: Instant) {
        if self.unrepaired.is_empty() {
            self.unrepaired = vec![false; usize::from(BUCKETS)];
        }
        let mut known = Vec::with_capacity(seen.len());
        let mut owner = vec![NOBODY; usize::from(BUCKETS)];
        for (index, shard) in seen.iter().enumerate() {
            let before = self.known.iter().find(|k| k.address == shard.address);
            let changed = before.is_some_and(|k| k.identity != shard.identity);
            let known_start = before.filter(|_| !changed).and_then(|k| k.started_by);
            let started_by = latest_start(known_start, shard.uptime, rules, now);
            let unverified_seen = before.is_some_and(|k| k.unverified_seen && !changed);
            // Slots it serves now that another primary served at the last probe.
            let mut moved: Vec<(u16, u16)> = Vec::new();
            for bucket in shard.buckets() {
                owner[usize::from(bucket)] = index as u16;
                let was = self.owner.get(usize::from(bucket)).copied().unwrap_or(NOBODY);
                if was != NOBODY && self.known[usize::from(was)].address != shard.address {
                    match moved.last_mut() {
                        Some((_, end)) if *end + 1 == bucket => *end = bucket,
                        _ => moved.push((bucket, bucket)),
                    }
                }
            }
            if !shard.verified {
                shard.buckets().for_each(|b| self.unrepaired[usize::from(b)] = true);
            }
            for bucket in moved.iter().flat_map(|(a, b)| *a..=*b) {
                self.unrepaired[usize::from(bucket)] = true;
            }
            if rules.quarantine {
                let address = &shard.address;
                let event = if changed {
                    Some(format!(
                        "primary {address} restarted or failed over (run_id or master_replid changed)"
                    ))
                } else if !shard.verified && !unverified_seen {
                    Some(format!(
                        "the data of primary {address} is not verified (new, restarted, promoted or flushed)"
                    ))
                } else {
                    None
                };
                if let Some(reason) = event {
                    self.hold(shard.ranges.clone(), now + rules.hold(), reason);
                } else if !moved.is_empty() {
                    self.hold(moved, now + rules.hold(), format!("slots moved to primary {address}"));
                }
                if let Some(started) = started_by.filter(|s| *s + rules.hold() > now) {
                    let reason = format!("primary {address} up for less than its hold (lock.max_ttl, at least 2 s)");
                    self.hold(shard.ranges.clone(), started + rules.hold(), reason);
                }
            }
            known.push(Known {
                address: shard.address.clone(),
                identity: shard.identity.clone(),
                started_by,
                unverified_seen: !shard.verified,
            });
        }
        self.known = known;
        self.owner = owner;
        self.holds.retain(|h| h.until > now);
        self.settle();
    }

    fn hold(&mut self, ranges: Vec<(u16, u16)>, until: Instant, reason: String) {
        // A hold already running as long (a young primary, probe after
        // probe) is not taken again.
        if (self.holds.iter()).any(|h| h.ranges == ranges && h.until >= until) {
            return;
        }
        tracing::warn!(
            buckets = ranges.iter().map(|(a, b)| usize::from(b - a) + 1).sum::<usize>(),
            %reason,
            rejoin_in = ?until.saturating_duration_since(Instant::now()),
            "buckets quarantined: not counted towards acquire quorums"
        );
        self.holds.push(Hold { ranges, until, reason });
    }

    /// The hold that keeps `bucket` out longest, if any is running.
    pub(crate) fn held(&self, bucket: u16, now: Instant) -> Option<(Instant, &str)> {
        (self.holds.iter())
            .filter(|h| h.until > now && h.ranges.iter().any(|(a, b)| (*a..=*b).contains(&bucket)))
            .max_by_key(|h| h.until)
            .map(|h| (h.until, h.reason.as_str()))
    }

    /// No hold and no unvouched bucket (every standalone master; a
    /// cluster but for a few probes after a change): every bucket counts,
    /// without reading the clock (asked on every lock request).
    pub(crate) fn all_in(&self) -> bool {
        !self.unsettled
    }

    fn settle(&mut self) {
        self.unsettled = !self.holds.is_empty() || self.unrepaired.contains(&true);
    }

    /// Whether no marker vouches for `bucket`'s data yet.
    pub(crate) fn unrepaired(&self, bucket: u16) -> bool {
        self.unrepaired.get(usize::from(bucket)).copied().unwrap_or(false)
    }

    /// The buckets to repair now: unvouched and no longer held.
    pub(crate) fn to_repair(&self, now: Instant) -> Vec<u16> {
        if self.all_in() {
            return Vec::new();
        }
        (0..BUCKETS)
            .filter(|b| self.unrepaired(*b) && self.held(*b, now).is_none())
            .collect()
    }

    /// How many buckets are out (held, or unvouched), and, when every
    /// bucket is, until when at least and why: then the position as a
    /// whole is out.
    pub(crate) fn out(&self, now: Instant) -> (usize, Option<(Instant, String)>) {
        if self.all_in() {
            return (0, None);
        }
        let mut out = 0;
        let mut first_back: Option<(Instant, &str)> = None;
        for bucket in 0..BUCKETS {
            let back = match self.held(bucket, now) {
                Some(hold) => hold,
                None if self.unrepaired(bucket) => (now, "its counters are being repaired"),
                None => continue,
            };
            out += 1;
            if first_back.is_none_or(|(at, _)| back.0 < at) {
                first_back = Some(back);
            }
        }
        let whole = (out == usize::from(BUCKETS)).then(|| first_back.map(|(at, why)| (at, why.to_owned())));
        (out, whole.flatten())
    }

    /// The primaries the last probe saw, with their buckets and those out.
    pub(crate) fn primaries(&self, now: Instant) -> Vec<Primary> {
        let mut primaries: Vec<Primary> = (self.known.iter())
            .map(|k| Primary {
                address: k.address.clone(),
                buckets: 0,
                buckets_out: 0,
            })
            .collect();
        for (bucket, owner) in self.owner.iter().enumerate() {
            let Some(primary) = primaries.get_mut(usize::from(*owner)) else {
                continue;
            };
            primary.buckets += 1;
            let bucket = bucket as u16;
            if !self.all_in() && (self.held(bucket, now).is_some() || self.unrepaired(bucket)) {
                primary.buckets_out += 1;
            }
        }
        primaries
    }

    /// A repair vouched for `buckets`.
    pub(crate) fn repaired(&mut self, buckets: &[u16]) {
        for bucket in buckets {
            if let Some(flag) = self.unrepaired.get_mut(usize::from(*bucket)) {
                *flag = false;
            }
        }
        self.settle();
    }
}

#[cfg(test)]
#[path = "shards_tests.rs"]
mod tests;
