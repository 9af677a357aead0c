//! The Redlock algorithm, free of gRPC and of Redis (docs/design.md#layers):
//! `quorum` (every decision, pure; docs/design.md#the-fencing-token) and
//! `vote` (what the nodes said), `node` (the seam a store implements; `fake`
//! in memory for tests), and `engine` with its operations over `fanout` and
//! `limit` (waits a late timer cannot cut short,
//! docs/design.md#late-timers):
//!
//! - exclusive and shared locks: `acquire` (with `lock_delay`), `handoff`,
//!   `extend` (its batch queue in `extensions`) and `release`;
//! - semaphores' `permits` (docs/design.md#semaphores), `set` (several
//!   resources at once, docs/design.md#sets) and `election` (a leader's
//!   record beside its lock, docs/design.md#elections);
//! - `inspect`, `listing` and force release, with the `holder` record
//!   (docs/design.md#who-holds-it); every key's bucket (`buckets`,
//!   docs/design.md#keys); the engine's `error`.
//!
//! Quarantine (docs/design.md#quarantine): the `monitor` probes, and judges
//! each master's `standing` and, on a cluster, its `shards`, by the `rules`.
//! What the outside hears: the `observer` (metrics) and the rounds' `spans`.

mod acquire;
pub mod buckets;
pub mod election;
pub mod engine;
mod error;
mod extend;
mod extensions;
#[cfg(test)]
pub mod fake;
#[cfg(test)]
mod fake_state;
mod fanout;
mod handoff;
pub mod holder;
mod inspect;
pub(crate) mod limit;
mod listing;
mod lock_delay;
pub(crate) mod monitor;
pub mod node;
pub(crate) mod observer;
mod permits;
pub(crate) mod quorum;
mod release;
pub mod rules;
mod set;
mod shards;
pub mod spans;
pub mod standing;
pub(crate) mod vote;

use std::fmt;
use std::time::Duration;

pub use acquire::{ALONE, Head};
pub use engine::{Engine, EngineConfig};
pub use error::Error;
pub use extensions::{EXTEND_BATCH_MAX, EXTEND_BATCHES_AT_ONCE};
pub use holder::Holder;
pub use listing::{Listed, Page, PageEnd};
pub use lock_delay::Lifetime;
pub use node::{Agreement, Announce, Extension, KeyView, Node, NodeError, RecordView, Swap};
pub use permits::{permits_name, slot_name};
pub use set::{AcquiredSet, MAX_SET};
pub use vote::{Acquired, FailureReason, HandOff, Inspection, NodeInspection, NodeVote, summarize};

/// Random bytes in a lock value (docs/design.md#the-lock-on-one-master: 20 bytes from the OS CSPRNG).
const VALUE_BYTES: usize = 20;

/// Lock values drawn from one fetch of OS randomness.
const VALUES_PER_FETCH: usize = 64;

/// `VALUE_BYTES` from the OS CSPRNG, fetched for 64 values at a time per
/// thread: an acquisition no longer costs a `getrandom` system call (one per
/// cycle of docs/performance.md's workload (b), 17% of the daemon's system
/// calls under strace). The pool's index hands each byte out once; bytes handed out are
/// also zeroed in the pool, which keeps no copy of values already issued.
fn os_random_bytes() -> [u8; VALUE_BYTES] {
    use std::cell::RefCell;
    const POOL_BYTES: usize = VALUES_PER_FETCH * VALUE_BYTES;
    thread_local! {
        /// Fetched bytes and how many are used (all, before the first fetch).
        static POOL: RefCell<(Box<[u8; POOL_BYTES]>, usize)> =
            RefCell::new((Box::new([0; POOL_BYTES]), POOL_BYTES));
    }
    POOL.with_borrow_mut(|(pool, used)| {
        if *used == POOL_BYTES {
            getrandom::fill(&mut pool[..]).expect("the OS random number generator failed");
            *used = 0;
        }
        let taken = &mut pool[*used..*used + VALUE_BYTES];
        let mut bytes = [0u8; VALUE_BYTES];
        bytes.copy_from_slice(taken);
        taken.fill(0);
        *used += VALUE_BYTES;
        bytes
    })
}

/// How a lock is held (docs/design.md#shared-locks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// One holder at a time (a writer).
    #[default]
    Exclusive,
    /// Any number of holders at once while no exclusive holder has it (readers).
    Shared,
}

impl Mode {
    /// The mode a lock value was issued for: a shared lock's value starts
    /// with `r`, an exclusive one's is plain hex.
    pub fn of(value: &str) -> Mode {
        if value.starts_with(SHARED_VALUE_START) {
            Mode::Shared
        } else {
            Mode::Exclusive
        }
    }

    /// A bounded name for metrics and logs.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Exclusive => "exclusive",
            Mode::Shared => "shared",
        }
    }
}

/// The first character of a shared lock's value (never a hex digit).
const SHARED_VALUE_START: char = 'r';
/// The first character of a permit's value (never a hex digit).
const PERMIT_VALUE_START: char = 'p';

/// What an acquisition asks for (docs/design.md#shared-locks, docs/design.md#semaphores).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Kind {
    /// A lock held by one holder at a time.
    #[default]
    Exclusive,
    /// A lock held together with other shared holders.
    Shared,
    /// One of this many permits of a semaphore (at least 2): a lock on one
    /// of as many slots.
    Permits(u32),
}

impl Kind {
    /// A bounded name for metrics (`redlockd_acquire_by_kind_total`).
    pub fn label(self) -> &'static str {
        match self {
            Kind::Exclusive => "exclusive",
            Kind::Shared => "shared",
            Kind::Permits(_) => "permit",
        }
    }
}

/// The permit a value holds: slot `slot` of a semaphore of `of` permits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permit {
    /// How many permits the semaphore has.
    pub of: u32,
    /// The slot (0-based) this permit holds.
    pub slot: u32,
}

/// The secret that proves ownership of one acquisition: 40 lowercase hex
/// characters, after an `r` for a shared lock (so the value says how it is
/// held: `Mode::of`). `Debug` and `Display` hide it, so it cannot reach a
/// log line.
#[derive(Clone, PartialEq, Eq)]
pub struct LockValue(String);

/// A lock value not in the format this daemon issues (`LockValue::parse`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "must be the value Acquire returned: {} lowercase hex characters, after an `r` for a shared lock or `p<permits>.<slot>.` for a permit, and `+<milliseconds>` after them for a lock delay (got {bytes} bytes)",
    2 * VALUE_BYTES
)]
pub struct MalformedValue {
    /// The length of what was given (never the value itself).
    pub bytes: usize,
}

impl LockValue {
    /// A fresh exclusive value from the operating system's CSPRNG.
    ///
    /// # Panics
    /// When the OS has no randomness to give (no lock can be safe then).
    pub fn random() -> LockValue {
        LockValue(hex::encode(os_random_bytes()))
    }

    /// A fresh value for a lock held in `mode`.
    ///
    /// # Panics
    /// As `random`.
    pub fn random_for(mode: Mode) -> LockValue {
        let hex = hex::encode(os_random_bytes());
        match mode {
            Mode::Exclusive => LockValue(hex),
            Mode::Shared => LockValue(format!("{SHARED_VALUE_START}{hex}")),
        }
    }

    /// A fresh value for `permit` (`p<of>.<slot>.` and the hex).
    ///
    /// # Panics
    /// As `random`.
    pub fn random_permit(permit: Permit) -> LockValue {
        let Permit { of, slot } = permit;
        LockValue(format!(
            "{PERMIT_VALUE_START}{of}.{slot}.{}",
            hex::encode(os_random_bytes())
        ))
    }

    /// Accepts a value in the format this daemon issues.
    ///
    /// # Errors
    /// When `s` is not in it (the message says what the format is).
    pub fn parse(s: &str) -> Result<LockValue, MalformedValue> {
        let (base, _) = lock_delay::split_delay(s);
        let hex = match base.strip_prefix(PERMIT_VALUE_START) {
            Some(rest) => permit_of(rest).map(|(_, hex)| hex),
            None => Some(base.strip_prefix(SHARED_VALUE_START).unwrap_or(base)),
        };
        let well_formed = hex.is_some_and(|hex| {
            hex.len() == 2 * VALUE_BYTES && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
        if well_formed {
            Ok(LockValue(s.to_owned()))
        } else {
            Err(MalformedValue { bytes: s.len() })
        }
    }

    /// The permit this value holds, for a semaphore's.
    pub fn permit(&self) -> Option<Permit> {
        Permit::of(&self.0)
    }

    /// How the lock this value holds is held.
    pub fn mode(&self) -> Mode {
        Mode::of(&self.0)
    }

    /// The value itself, for the wire and the scripts.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl Permit {
    /// The permit a lock value holds, for a semaphore's.
    pub fn of(value: &str) -> Option<Permit> {
        permit_of(value.strip_prefix(PERMIT_VALUE_START)?).map(|(permit, _)| permit)
    }
}

/// `<of>.<slot>.<hex>` read as the permit and the hex (`slot < of`, both
/// plain decimal).
fn permit_of(rest: &str) -> Option<(Permit, &str)> {
    let mut parts = rest.splitn(3, '.');
    let mut number = || {
        let digits = parts.next()?;
        let plain = !digits.is_empty() && digits.len() <= 5 && digits.bytes().all(|b| b.is_ascii_digit());
        plain.then(|| digits.parse::<u32>().ok()).flatten()
    };
    let (of, slot) = (number()?, number()?);
    (slot < of && of >= 2).then_some((Permit { of, slot }, parts.next()?))
}

impl fmt::Debug for LockValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LockValue(<redacted>)")
    }
}

/// A granted lock (docs/design.md#acquire, step 7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The resource, as requested.
    pub resource: String,
    /// The ownership secret for Extend and Release.
    pub value: LockValue,
    /// Strictly increasing per resource; unique per grant.
    pub fencing_token: u64,
    /// How long the lock is held, counted from when the request was sent.
    pub validity: Duration,
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
