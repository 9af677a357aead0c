//! The locks granted through this daemon, by value: when each was granted
//! and until when it is valid, to whom, its token, the hand-offs in a row
//! that led to it, and the tenant's quota unit it takes. For hold times,
//! the held-locks gauge, the hand-off bound, quotas and audit events.
//! Expired entries are swept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use crate::locks::quota::Taken;
use crate::redlock::{Lease, LockValue};
use crate::telemetry::metrics::Metrics;

/// One lock granted through this daemon.
#[derive(Debug)]
struct Held {
    /// Its lock name.
    name: String,
    owner: String,
    token: u64,
    granted: Instant,
    expires: Instant,
    /// How many hand-offs in a row led to it (0: a plain acquisition).
    streak: u32,
    /// The tenant's `max_locks_held` unit, given back with the entry.
    _quota: Option<Taken>,
    /// For a set (docs/design.md#sets), the lock names
    /// of its members.
    set: Vec<String>,
}

/// What `forget` knew of a lock.
#[derive(Debug)]
pub(crate) struct Gone {
    pub held_for: Duration,
    pub streak: u32,
    pub owner: String,
    pub token: u64,
}

pub(crate) struct HeldLocks {
    map: Mutex<HashMap<String, Held>>,
    metrics: Arc<Metrics>,
}

impl HeldLocks {
    pub(crate) fn new(metrics: Arc<Metrics>) -> HeldLocks {
        HeldLocks {
            map: Mutex::new(HashMap::new()),
            metrics,
        }
    }

    fn map(&self) -> MutexGuard<'_, HashMap<String, Held>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Remembers a grant valid until `expires`. A lock already known (a
    /// hand-off recorded it before its waiter's acquisition did) keeps its
    /// streak, and takes the owner and quota unit given now.
    pub(crate) fn granted(&self, lease: &Lease, owner: &str, streak: u32, quota: Option<Taken>) {
        let now = Instant::now();
        let expires = now + lease.validity;
        let mut map = self.map();
        match map.get_mut(lease.value.expose()) {
            Some(held) => {
                held.expires = expires;
                held.owner = owner.to_owned();
                if quota.is_some() {
                    held._quota = quota;
                }
            }
            None => {
                map.insert(
                    lease.value.expose().to_owned(),
                    Held {
                        name: lease.resource.clone(),
                        owner: owner.to_owned(),
                        token: lease.fencing_token,
                        granted: now,
                        expires,
                        streak,
                        _quota: quota,
                        set: Vec::new(),
                    },
                );
            }
        }
        // Sweep locks that expired unreleased, now and then.
        if map.len() > 1024 && map.len().is_power_of_two() {
            map.retain(|_, h| h.expires > now);
        }
        self.metrics.locks_held(map.len());
    }

    /// Remembers a set granted here: one entry (one value), its members.
    pub(crate) fn granted_set(&self, leases: &[Lease], owner: &str, quota: Option<Taken>) {
        self.granted(&leases[0], owner, 0, quota);
        if let Some(held) = self.map().get_mut(leases[0].value.expose()) {
            held.set = leases.iter().map(|lease| lease.resource.clone()).collect();
        }
    }

    /// The members of the live set granted here that holds lock `name`
    /// (empty when none does).
    pub(crate) fn set_of(&self, name: &str) -> Vec<String> {
        let now = Instant::now();
        (self.map().values())
            .find(|held| held.expires > now && held.set.iter().any(|member| member == name))
            .map_or_else(Vec::new, |held| held.set.clone())
    }

    /// An extension: valid until `expires`.
    pub(crate) fn extended(&self, value: &LockValue, expires: Instant) {
        if let Some(held) = self.map().get_mut(value.expose()) {
            held.expires = expires;
        }
    }

    /// Forgets a lock, if it was granted here.
    pub(crate) fn forget(&self, value: &LockValue) -> Option<Gone> {
        let mut map = self.map();
        let gone = map.remove(value.expose()).map(|h| Gone {
            held_for: h.granted.elapsed(),
            streak: h.streak,
            owner: h.owner,
            token: h.token,
        });
        self.metrics.locks_held(map.len());
        gone
    }

    /// Forgets every lock on `name` (it was taken away); returns how many.
    pub(crate) fn forget_name(&self, name: &str) -> usize {
        let mut map = self.map();
        let before = map.len();
        map.retain(|_, h| h.name != name);
        self.metrics.locks_held(map.len());
        before - map.len()
    }

    /// Forgets the locks that expired unreleased (giving back their quota
    /// units); returns how many are left.
    pub(crate) fn sweep(&self) -> usize {
        let now = Instant::now();
        let mut map = self.map();
        map.retain(|_, h| h.expires > now);
        self.metrics.locks_held(map.len());
        map.len()
    }
}
