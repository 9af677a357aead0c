//! Keyed reentrancy (docs/design.md#reentrancy): a lock taken with a
//! reentrancy key is taken again at once, with the same value and the same
//! fencing token, by any acquisition through this daemon naming the same
//! key while it is held; each one counts up, each release counts down, and
//! the lock is released at zero. Keys are kept only as SHA-256 digests,
//! never logged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::OwnedMutexGuard;
use tokio::time::Instant;

use crate::redlock::{Kind, Lease};

/// From this many keys on, `turn` sweeps lapsed ones now and then.
const SWEEP_FROM: usize = 1024;

/// A lock name and the digest of a reentrancy key.
type Key = (String, [u8; 32]);

/// One lock held under a key: the lease and how many holds it counts.
#[derive(Debug)]
struct Entry {
    lease: Lease,
    kind: Kind,
    count: u32,
    expires: Instant,
}

/// The locks held under reentrancy keys, by key; the acquisitions of one
/// key take turns (the first one's grant is the others' lock).
#[derive(Default)]
pub(crate) struct Reentries {
    slots: Mutex<HashMap<Key, Arc<tokio::sync::Mutex<Option<Entry>>>>>,
    /// Lock values held under a key, to find it at release and extension.
    by_value: Mutex<HashMap<String, Key>>,
}

/// An acquisition's turn on its key: `reenter` or `hold` it.
pub(crate) struct Turn<'a> {
    reentries: &'a Reentries,
    key: Key,
    entry: OwnedMutexGuard<Option<Entry>>,
}

/// What `leave` decided.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Left {
    /// Holds remain: nothing to release.
    Counted(u32),
    /// The last hold: release the lock.
    Last,
    /// Not held under a key.
    NotKeyed,
}

impl Reentries {
    fn slots(&self) -> MutexGuard<'_, HashMap<Key, Arc<tokio::sync::Mutex<Option<Entry>>>>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn by_value(&self) -> MutexGuard<'_, HashMap<String, Key>> {
        self.by_value.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for `key`'s turn on lock `name`.
    pub(crate) async fn turn(&self, name: &str, key: &str) -> Turn<'_> {
        let digest = ring::digest::digest(&ring::digest::SHA256, key.as_bytes());
        let key: Key = (name.to_owned(), digest.as_ref().try_into().expect("32 bytes"));
        let slot = {
            let mut slots = self.slots();
            // Now and then, drop the keys whose locks lapsed unreleased (a
            // caller that died holding one never counts it down).
            if slots.len() >= SWEEP_FROM && slots.len().is_power_of_two() {
                self.sweep(&mut slots);
            }
            slots.entry(key.clone()).or_default().clone()
        };
        Turn {
            reentries: self,
            key,
            entry: slot.lock_owned().await,
        }
    }

    /// A release of `value`: counts one hold down (a lapsed lock's last).
    pub(crate) async fn leave(&self, value: &str) -> Left {
        let Some(key) = self.by_value().get(value).cloned() else {
            return Left::NotKeyed;
        };
        let Some(slot) = self.slots().get(&key).cloned() else {
            return Left::NotKeyed;
        };
        let mut entry = slot.lock().await;
        match entry.as_mut() {
            Some(held) if held.lease.value.expose() == value && held.count > 1 && held.expires > Instant::now() => {
                held.count -= 1;
                Left::Counted(held.count)
            }
            Some(held) if held.lease.value.expose() == value => {
                *entry = None;
                self.forget(&key, value);
                Left::Last
            }
            _ => Left::NotKeyed,
        }
    }

    /// An extension of `value` succeeded: valid until `expires`.
    pub(crate) async fn extended(&self, value: &str, expires: Instant) {
        // One map at a time (`sweep` takes them in the other order).
        let Some(key) = self.by_value().get(value).cloned() else {
            return;
        };
        let Some(slot) = self.slots().get(&key).cloned() else {
            return;
        };
        if let Some(held) = slot
            .lock()
            .await
            .as_mut()
            .filter(|held| held.lease.value.expose() == value)
        {
            held.expires = expires;
        }
    }

    /// Drops the keys nobody waits for whose lock lapsed (or that hold
    /// none), with their values.
    fn sweep(&self, slots: &mut HashMap<Key, Arc<tokio::sync::Mutex<Option<Entry>>>>) {
        let now = Instant::now();
        let mut gone = Vec::new();
        slots.retain(|_, slot| {
            let Ok(entry) = slot.try_lock() else {
                return true;
            };
            let live = entry.as_ref().is_some_and(|held| held.expires > now);
            if !live && let Some(held) = entry.as_ref() {
                gone.push(held.lease.value.expose().to_owned());
            }
            live || Arc::strong_count(slot) > 1
        });
        let mut by_value = self.by_value();
        gone.iter().for_each(|value| {
            by_value.remove(value);
        });
    }

    /// How many keys are remembered (for tests).
    #[cfg(test)]
    fn remembered(&self) -> (usize, usize) {
        (self.slots().len(), self.by_value().len())
    }

    /// Every lock of `name` lapses: it was taken away (a force release).
    pub(crate) async fn lapse_name(&self, name: &str) {
        let slots: Vec<_> = (self.slots().iter())
            .filter(|(key, _)| key.0 == name)
            .map(|(_, slot)| slot.clone())
            .collect();
        for slot in slots {
            if let Some(held) = slot.lock().await.as_mut() {
                held.expires = Instant::now();
            }
        }
    }

    /// Drops `key` (and `value`'s entry) once nothing is held under it;
    /// called by `leave`, which holds one clone of the key's slot.
    fn forget(&self, key: &Key, value: &str) {
        self.by_value().remove(value);
        let mut slots = self.slots();
        // Only while nobody waits for its turn: a waiter holds a clone too.
        if slots.get(key).is_some_and(|slot| Arc::strong_count(slot) <= 2) {
            slots.remove(key);
        }
    }
}

impl Turn<'_> {
    /// The lock held under this key, counted once more, when it is still
    /// valid for `kind`; `Err(held)` when it is held as another kind.
    pub(crate) fn reenter(&mut self, kind: Kind) -> Result<Option<Lease>, Kind> {
        let now = Instant::now();
        match self.entry.as_mut() {
            Some(held) if held.expires > now && held.kind != kind => Err(held.kind),
            Some(held) if held.expires > now => {
                held.count += 1;
                let mut lease = held.lease.clone();
                lease.validity = held.expires - now;
                Ok(Some(lease))
            }
            Some(held) => {
                // Lapsed: whatever was counted is gone with it.
                let value = held.lease.value.expose().to_owned();
                *self.entry = None;
                self.reentries.by_value().remove(&value);
                Ok(None)
            }
            None => Ok(None),
        }
    }

    /// A fresh grant of `kind`, held under this key once.
    pub(crate) fn hold(mut self, lease: &Lease, kind: Kind) {
        let value = lease.value.expose().to_owned();
        self.reentries.by_value().insert(value, self.key.clone());
        *self.entry = Some(Entry {
            lease: lease.clone(),
            kind,
            count: 1,
            expires: Instant::now() + lease.validity,
        });
    }
}

#[cfg(test)]
#[path = "reentry_tests.rs"]
mod tests;
