//! Per-tenant quotas (docs/operations.md#quotas): locks held, waiters and
//! sessions through this daemon, and acquisitions per second. Waiters and
//! sessions are counts taken before the work starts and given back by a
//! guard, so callers racing for the last unit cannot both get it. Locks
//! held are checked when an acquisition starts and counted when it is
//! granted (a waiter is not a holder): acquisitions racing for the last
//! unit may pass it by as many as are in flight at once.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::time::Instant;

use crate::locks::error::Error;

/// One tenant's limits; `None` is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Limits {
    pub locks_held: Option<u64>,
    pub waiters: Option<u64>,
    pub sessions: Option<u64>,
    pub acquires_per_second: Option<f64>,
}

/// A tenant's limits and what it uses now, in this daemon.
#[derive(Debug)]
pub(crate) struct Quota {
    tenant: String,
    limits: Limits,
    held: AtomicU64,
    waiting: AtomicU64,
    sessions: AtomicU64,
    /// Tokens left and when they were last counted (a bucket of one
    /// second's worth, refilled continuously).
    bucket: Mutex<(f64, Instant)>,
}

/// Which count a `Taken` gives back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    LocksHeld,
    Waiters,
    Sessions,
}

impl Kind {
    /// The quota's name, as in the tenants file.
    fn name(self) -> &'static str {
        match self {
            Kind::LocksHeld => "max_locks_held",
            Kind::Waiters => "max_waiters",
            Kind::Sessions => "max_sessions",
        }
    }
}

/// One unit of a count, given back when dropped.
#[derive(Debug)]
pub(crate) struct Taken {
    quota: std::sync::Arc<Quota>,
    kind: Kind,
}

impl Drop for Taken {
    fn drop(&mut self) {
        self.quota.count(self.kind).fetch_sub(1, Ordering::SeqCst);
    }
}

impl Quota {
    pub(crate) fn new(tenant: &str, limits: Limits) -> Quota {
        Quota {
            tenant: tenant.to_owned(),
            limits,
            held: AtomicU64::new(0),
            waiting: AtomicU64::new(0),
            sessions: AtomicU64::new(0),
            bucket: Mutex::new((limits.acquires_per_second.unwrap_or(0.0), Instant::now())),
        }
    }

    fn count(&self, kind: Kind) -> &AtomicU64 {
        match kind {
            Kind::LocksHeld => &self.held,
            Kind::Waiters => &self.waiting,
            Kind::Sessions => &self.sessions,
        }
    }

    fn limit(&self, kind: Kind) -> Option<u64> {
        match kind {
            Kind::LocksHeld => self.limits.locks_held,
            Kind::Waiters => self.limits.waiters,
            Kind::Sessions => self.limits.sessions,
        }
    }

    /// Takes one unit of `kind`.
    ///
    /// # Errors
    /// `QuotaExceeded` when the tenant already uses all of it.
    pub(crate) fn take(self: &std::sync::Arc<Self>, kind: Kind) -> Result<Taken, Error> {
        let before = self.count(kind).fetch_add(1, Ordering::SeqCst);
        let taken = Taken {
            quota: self.clone(),
            kind,
        };
        match self.limit(kind) {
            Some(limit) if before >= limit => Err(self.exceeded(
                kind.name(),
                format!("{before} in use through this daemon, the most the tenants file allows"),
            )),
            _ => Ok(taken),
        }
    }

    /// Whether another unit of `kind` is free now (taken later, by `count_one`).
    ///
    /// # Errors
    /// `QuotaExceeded` when the tenant already uses all of it.
    pub(crate) fn check(&self, kind: Kind) -> Result<(), Error> {
        let now = self.count(kind).load(Ordering::SeqCst);
        match self.limit(kind) {
            Some(limit) if now >= limit => Err(self.exceeded(
                kind.name(),
                format!("{now} in use through this daemon, the most the tenants file allows"),
            )),
            _ => Ok(()),
        }
    }

    /// Counts one unit of `kind` whatever the limit (after `check`).
    pub(crate) fn count_one(self: &std::sync::Arc<Self>, kind: Kind) -> Taken {
        self.count(kind).fetch_add(1, Ordering::SeqCst);
        Taken {
            quota: self.clone(),
            kind,
        }
    }

    /// Counts one acquisition against the rate.
    ///
    /// # Errors
    /// `QuotaExceeded` when the tenant used its second's worth.
    pub(crate) fn acquisition(&self) -> Result<(), Error> {
        let Some(rate) = self.limits.acquires_per_second else {
            return Ok(());
        };
        let mut bucket = self.bucket.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let (tokens, since) = *bucket;
        let tokens = (tokens + now.duration_since(since).as_secs_f64() * rate).min(rate.max(1.0));
        if tokens < 1.0 {
            *bucket = (tokens, now);
            return Err(self.exceeded(
                "max_acquires_per_second",
                format!("more than {rate} acquisitions per second through this daemon"),
            ));
        }
        *bucket = (tokens - 1.0, now);
        Ok(())
    }

    fn exceeded(&self, quota: &'static str, what: String) -> Error {
        Error::QuotaExceeded {
            tenant: self.tenant.clone(),
            quota,
            message: format!("tenant {:?} is over its quota {quota}: {what}", self.tenant),
        }
    }
}

#[cfg(test)]
#[path = "quota_tests.rs"]
mod tests;
