//! Request-field validation: every check names the field and the allowed
//! range, so a client learns what to change from the message alone.

use std::time::Duration;

use crate::api::proto::LockMode;
use crate::config::{LockConfig, show};
use crate::locks::error::Error;
use crate::redlock::{Kind, LockValue, MAX_SET, Mode};

/// Longest resource name, in bytes.
pub const MAX_RESOURCE_BYTES: usize = 256;
/// Longest owner label, in bytes.
pub const MAX_OWNER_BYTES: usize = 256;

/// The limits a request is checked against (from `[lock]`).
#[derive(Debug, Clone)]
pub struct Limits {
    /// TTL when unset.
    pub default_ttl: Duration,
    /// Smallest TTL.
    pub min_ttl: Duration,
    /// Largest TTL.
    pub max_ttl: Duration,
    /// Longest wait.
    pub max_wait: Duration,
    /// Longest a session may hold a lock.
    pub max_hold: Duration,
    /// The most permits of a semaphore.
    pub max_permits: u32,
    /// The longest lock delay.
    pub max_lock_delay: Duration,
}

impl From<&LockConfig> for Limits {
    fn from(lock: &LockConfig) -> Limits {
        Limits {
            default_ttl: lock.default_ttl,
            min_ttl: lock.min_ttl,
            max_ttl: lock.max_ttl,
            max_wait: lock.max_wait,
            max_hold: lock.max_hold,
            max_permits: lock.max_permits,
            max_lock_delay: lock.max_lock_delay,
        }
    }
}

impl Limits {
    /// A TTL within `[min_ttl, max_ttl]`; unset means `default_ttl`.
    ///
    /// # Errors
    /// `InvalidArgument` naming `field` when out of range.
    pub fn ttl(&self, field: &'static str, ttl: Option<pbjson_types::Duration>) -> Result<Duration, Error> {
        let Some(ttl) = ttl else {
            return Ok(self.default_ttl);
        };
        let ttl = duration(field, ttl)?;
        if ttl < self.min_ttl || ttl > self.max_ttl {
            return Err(Error::invalid(
                field,
                format!(
                    "{} is outside the allowed range [{}, {}]",
                    show(ttl),
                    show(self.min_ttl),
                    show(self.max_ttl)
                ),
            ));
        }
        Ok(ttl)
    }

    /// What a request asks for: its `mode` (`LockMode` on the wire) and
    /// `permits` (0 or 1: a lock; 2 to `max_permits`: a permit of a
    /// semaphore, which is never shared).
    ///
    /// # Errors
    /// `InvalidArgument` naming `mode` or `permits`.
    pub fn kind(&self, wire_mode: i32, permits: u32) -> Result<Kind, Error> {
        let shared = mode(wire_mode)? == Mode::Shared;
        match permits {
            0 | 1 if shared => Ok(Kind::Shared),
            0 | 1 => Ok(Kind::Exclusive),
            n if n > self.max_permits => Err(Error::invalid(
                "permits",
                format!(
                    "{n} is above the allowed maximum of {} (0 or 1: a lock)",
                    self.max_permits
                ),
            )),
            _ if shared => Err(Error::invalid(
                "permits",
                "a shared lock takes no permits: set permits to 0 or 1, or mode to LOCK_MODE_EXCLUSIVE",
            )),
            n => Ok(Kind::Permits(n)),
        }
    }

    /// A wait within `[0, max_wait]`; unset means no wait.
    ///
    /// # Errors
    /// `InvalidArgument` naming `wait` when out of range.
    pub fn wait(&self, wait: Option<pbjson_types::Duration>) -> Result<Duration, Error> {
        let wait = wait.map_or(Ok(Duration::ZERO), |w| duration("wait", w))?;
        if wait > self.max_wait {
            return Err(Error::invalid(
                "wait",
                format!("{} is above the allowed maximum of {}", show(wait), show(self.max_wait)),
            ));
        }
        Ok(wait)
    }
}

impl Limits {
    /// A session's `max_hold` within `(0, max_hold]`; unset means the
    /// configured `max_hold`.
    ///
    /// # Errors
    /// `InvalidArgument` naming `max_hold` when out of range.
    pub fn max_hold(&self, max_hold: Option<pbjson_types::Duration>) -> Result<Duration, Error> {
        let Some(max_hold) = max_hold else {
            return Ok(self.max_hold);
        };
        let max_hold = duration("max_hold", max_hold)?;
        if max_hold.is_zero() || max_hold > self.max_hold {
            return Err(Error::invalid(
                "max_hold",
                format!(
                    "{} is outside the allowed range (0, {}]",
                    show(max_hold),
                    show(self.max_hold)
                ),
            ));
        }
        Ok(max_hold)
    }

    /// A session's lock delay: zero when unset, else at most
    /// `lock.max_lock_delay` (docs/design.md#lock-delay).
    ///
    /// # Errors
    /// `InvalidArgument` naming `lock_delay`, outside `[0, max_lock_delay]`.
    pub fn lock_delay(&self, lock_delay: Option<pbjson_types::Duration>) -> Result<Duration, Error> {
        let Some(lock_delay) = lock_delay else {
            return Ok(Duration::ZERO);
        };
        let lock_delay = duration("lock_delay", lock_delay)?;
        if lock_delay > self.max_lock_delay {
            return Err(Error::invalid(
                "lock_delay",
                format!(
                    "{} is outside the allowed range [0s, {}]",
                    show(lock_delay),
                    show(self.max_lock_delay)
                ),
            ));
        }
        Ok(lock_delay)
    }
}

/// A protobuf duration as a non-negative `Duration`.
fn duration(field: &'static str, d: pbjson_types::Duration) -> Result<Duration, Error> {
    let canonical = d.seconds >= 0 && (0..1_000_000_000).contains(&d.nanos);
    let converted = if canonical { Duration::try_from(d).ok() } else { None };
    converted.ok_or_else(|| {
        Error::invalid(
            field,
            format!(
                "{}s {}ns is not a valid non-negative duration (seconds >= 0, 0 <= nanos < 1e9)",
                d.seconds, d.nanos
            ),
        )
    })
}

/// Checks printable UTF-8 of 1..=max bytes (a `String` is already UTF-8).
fn printable(field: &'static str, s: &str, min: usize, max: usize) -> Result<(), Error> {
    if s.len() < min || s.len() > max {
        return Err(Error::invalid(
            field,
            format!(
                "is {} bytes long; it must be {min} to {max} bytes of printable UTF-8",
                s.len()
            ),
        ));
    }
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(Error::invalid(
            field,
            format!("contains the control character {c:?}; only printable UTF-8 is allowed"),
        ));
    }
    Ok(())
}

/// Longest election value, in bytes (docs/design.md#elections).
pub const MAX_ELECTION_VALUE_BYTES: usize = 4096;

/// An election's name: 1–256 bytes of printable UTF-8.
///
/// # Errors
/// `InvalidArgument` naming `election`.
pub fn election(s: &str) -> Result<(), Error> {
    printable("election", s, 1, MAX_RESOURCE_BYTES)
}

/// A candidate's name: 1–256 bytes of printable UTF-8.
///
/// # Errors
/// `InvalidArgument` naming `candidate`.
pub fn candidate(s: &str) -> Result<(), Error> {
    printable("candidate", s, 1, MAX_OWNER_BYTES)
}

/// A leader's value: at most 4096 bytes, anything.
///
/// # Errors
/// `InvalidArgument` naming `value`.
pub fn election_value(value: &[u8]) -> Result<(), Error> {
    if value.len() > MAX_ELECTION_VALUE_BYTES {
        return Err(Error::invalid(
            "value",
            format!(
                "is {} bytes long; at most {MAX_ELECTION_VALUE_BYTES} are allowed",
                value.len()
            ),
        ));
    }
    Ok(())
}

/// A term: a fencing token, never 0.
///
/// # Errors
/// `InvalidArgument` naming `term`.
pub fn term(term: u64) -> Result<u64, Error> {
    if term == 0 {
        return Err(Error::invalid("term", "must be set: the term ELECTED or Leader gave"));
    }
    Ok(term)
}

/// A resource name: 1–256 bytes of printable UTF-8.
///
/// # Errors
/// `InvalidArgument` naming `resource`.
pub fn resource(s: &str) -> Result<(), Error> {
    printable("resource", s, 1, MAX_RESOURCE_BYTES)
}

/// A lock mode from the wire (`LockMode`, an open enum there).
///
/// # Errors
/// `InvalidArgument` naming `mode`, for a number outside the enum.
pub fn mode(wire: i32) -> Result<Mode, Error> {
    match LockMode::try_from(wire) {
        Ok(LockMode::Exclusive) => Ok(Mode::Exclusive),
        Ok(LockMode::Shared) => Ok(Mode::Shared),
        Err(_) => Err(Error::invalid(
            "mode",
            format!("must be LOCK_MODE_EXCLUSIVE (0) or LOCK_MODE_SHARED (1); got {wire}"),
        )),
    }
}

/// Longest reentrancy key, in bytes.
pub const MAX_REENTRANCY_KEY_BYTES: usize = 128;

/// A reentrancy key: at most 128 bytes; empty is none.
///
/// # Errors
/// `InvalidArgument` naming `reentrancy_key` (without the key: it is never
/// shown).
pub fn reentrancy_key(key: &str) -> Result<Option<&str>, Error> {
    if key.len() > MAX_REENTRANCY_KEY_BYTES {
        return Err(Error::invalid(
            "reentrancy_key",
            format!("is {} bytes; at most {MAX_REENTRANCY_KEY_BYTES} are allowed", key.len()),
        ));
    }
    Ok(Some(key).filter(|k| !k.is_empty()))
}

/// A set's resources: 1 to `MAX_SET` names, each a valid resource.
///
/// # Errors
/// `InvalidArgument` naming `resources` (and the member at fault).
pub fn resources(list: &[String]) -> Result<(), Error> {
    if list.is_empty() || list.len() > MAX_SET {
        return Err(Error::invalid(
            "resources",
            format!("{} names; 1 to {MAX_SET} are allowed", list.len()),
        ));
    }
    for (i, name) in list.iter().enumerate() {
        if let Err(Error::InvalidArgument { reason, .. }) = resource(name) {
            return Err(Error::invalid("resources", format!("[{i}] {reason}")));
        }
    }
    Ok(())
}

/// A listing's resource prefix: 1–256 bytes of printable UTF-8.
///
/// # Errors
/// `InvalidArgument` naming `prefix`.
pub fn prefix(s: &str) -> Result<(), Error> {
    printable("prefix", s, 1, MAX_RESOURCE_BYTES)
}

/// Longest force-release reason, in bytes.
pub const MAX_REASON_BYTES: usize = 256;

/// A force-release reason: 1–256 bytes of printable UTF-8.
///
/// # Errors
/// `InvalidArgument` naming `reason`.
pub fn reason(s: &str) -> Result<(), Error> {
    printable("reason", s, 1, MAX_REASON_BYTES)
}

/// Largest listing page.
pub const MAX_PAGE_SIZE: u32 = 1000;

/// A listing's page size: 1 to 1,000.
///
/// # Errors
/// `InvalidArgument` naming `page_size`.
pub fn page_size(n: u32) -> Result<usize, Error> {
    if n == 0 || n > MAX_PAGE_SIZE {
        return Err(Error::invalid(
            "page_size",
            format!("is {n}; it must lie within [1, {MAX_PAGE_SIZE}]"),
        ));
    }
    Ok(n as usize)
}

/// An owner label: 0–256 bytes of printable UTF-8.
///
/// # Errors
/// `InvalidArgument` naming `owner`.
pub fn owner(s: &str) -> Result<(), Error> {
    printable("owner", s, 0, MAX_OWNER_BYTES)
}

/// A lock value in the format Acquire issues.
///
/// # Errors
/// `InvalidArgument` naming `value`.
pub fn value(s: &str) -> Result<LockValue, Error> {
    LockValue::parse(s).map_err(|malformed| Error::invalid("value", malformed.to_string()))
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
