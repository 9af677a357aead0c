//! Lock delay on a lock taken by `Acquire` (docs/design.md#lock-delay): the
//! masters keep the key `lock_delay` longer than its validity, so a holder
//! that dies without releasing leaves the resource to nobody for that long.
//! The delay rides in the lock value (`<value>+<milliseconds>`), so every
//! `Extend` of it, through any daemon, keeps the same margin without the
//! client naming it again; a `Release` deletes the key at once.

use std::time::Duration;

use super::LockValue;

/// Between a value and its lock delay in milliseconds: neither a hex digit
/// nor a character of the permit or shared prefixes.
const DELAY_MARK: char = '+';
/// The most digits a delay may have (`lock.max_lock_delay` is at most an hour).
const MAX_DELAY_DIGITS: usize = 10;

/// How long a grant lasts: `ttl` of validity, and `lock_delay` more on the
/// masters when its holder never releases it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lifetime {
    /// The validity asked for.
    pub ttl: Duration,
    /// How long the key outlives `ttl` (zero: not at all).
    pub lock_delay: Duration,
}

impl From<Duration> for Lifetime {
    fn from(ttl: Duration) -> Lifetime {
        Lifetime {
            ttl,
            lock_delay: Duration::ZERO,
        }
    }
}

impl LockValue {
    /// This value, carrying `lock_delay` (rounded up to a millisecond); a
    /// zero delay leaves it as it is.
    #[must_use]
    pub fn delayed(self, lock_delay: Duration) -> LockValue {
        if lock_delay.is_zero() {
            return self;
        }
        let ms = lock_delay.as_micros().div_ceil(1000);
        LockValue(format!("{}{DELAY_MARK}{ms}", self.0))
    }

    /// The lock delay this value carries (zero for most).
    pub fn lock_delay(&self) -> Duration {
        split_delay(&self.0).1
    }

    /// How long the masters keep a key holding this value when it is
    /// granted or extended for `ttl`.
    pub fn key_ttl(&self, ttl: Duration) -> Duration {
        ttl.saturating_add(self.lock_delay())
    }
}

/// `s` without its delay suffix, and the delay (zero when it has none or
/// the suffix is not one this daemon writes).
pub(super) fn split_delay(s: &str) -> (&str, Duration) {
    let Some((base, digits)) = s.rsplit_once(DELAY_MARK) else {
        return (s, Duration::ZERO);
    };
    let plain = !digits.is_empty() && digits.len() <= MAX_DELAY_DIGITS && digits.bytes().all(|b| b.is_ascii_digit());
    match digits.parse::<u64>() {
        Ok(ms) if plain && ms > 0 => (base, Duration::from_millis(ms)),
        _ => (s, Duration::ZERO),
    }
}

#[cfg(test)]
#[path = "lock_delay_tests.rs"]
mod tests;
