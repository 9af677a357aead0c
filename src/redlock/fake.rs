//! An in-memory `Node` for engine tests: keys with TTLs on Tokio's clock (so
//! tests run with paused time), one fence counter, and scripted faults
//! (down, slow, replies lost after the write happened). Not for production.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use super::Mode;
pub(crate) use super::fake_state::Fault;
use super::fake_state::{State, WRITER_WAIT, holds, relayed};
use super::node::{Agreement, Announce, Extension, KeyView, Node, NodeError, RecordView, SHARED_MARK, Standing, Swap};
use super::standing::NodeHealth;

/// An in-memory lock store. Clones share state, so a test keeps a handle to
/// a node it gave the engine.
#[derive(Debug, Clone)]
pub(crate) struct FakeNode {
    name: String,
    state: Arc<Mutex<State>>,
    /// What a monitor decided of it (`monitor_tests`); the engine goes by
    /// `set_standing` alone.
    pub(super) health: Arc<NodeHealth>,
}

impl FakeNode {
    /// A node whose fence counter starts at `counter` (as if seeded).
    pub(crate) fn new(name: &str, counter: u64) -> FakeNode {
        let state = State {
            counter: Some(counter),
            ..State::default()
        };
        FakeNode {
            name: name.to_owned(),
            state: Arc::new(Mutex::new(state)),
            health: Arc::default(),
        }
    }

    /// Sets the fault this node shows from now on.
    pub(crate) fn set_fault(&self, fault: Fault) {
        self.state().fault = fault;
    }

    /// Sets the standing the engine sees (quarantine, preflight).
    pub(crate) fn set_standing(&self, standing: Standing) {
        self.state().standing = Some(standing);
    }

    /// The node's fence counter.
    pub(crate) fn counter(&self) -> Option<u64> {
        self.state().counter
    }

    /// The value holding `key`, if it has not expired.
    pub(crate) fn holder(&self, key: &str) -> Option<String> {
        let now = Instant::now();
        let state = self.state();
        state
            .keys
            .get(key)
            .filter(|(_, expires)| *expires > now)
            .map(|(v, _)| v.clone())
    }

    /// Marks `key` as if a waiter on another daemon had been refused.
    pub(crate) fn mark_waited_elsewhere(&self, key: &str) {
        self.state().waited.insert(key.to_owned());
    }

    /// How many unlock commands reached this node.
    pub(crate) fn unlocks(&self) -> usize {
        self.state().unlocks
    }

    /// How many lock commands (`try_lock`) reached this node.
    pub(crate) fn tries(&self) -> usize {
        self.state().tries
    }

    /// How many extend commands (each a batch) reached this node.
    pub(crate) fn extend_calls(&self) -> usize {
        self.state().extend_calls
    }

    /// How many election reads (`read_record`) reached this node.
    pub(crate) fn record_reads(&self) -> usize {
        self.state().record_reads
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `op` on the state under the node's current fault.
    async fn call<T: Send + 'static>(&self, op: impl FnOnce(&mut State, Instant) -> T) -> Result<T, NodeError> {
        let fault = self.state().fault;
        match fault {
            Fault::Down => return Err(NodeError::Failed("connection refused".into())),
            Fault::Slow(delay) => tokio::time::sleep(delay).await,
            Fault::None | Fault::LoseReplies | Fault::Relayed(_) => {}
        }
        let now = Instant::now();
        let result = {
            let mut state = self.state();
            state.keys.retain(|_, (_, expires)| *expires > now);
            op(&mut state, now)
        };
        match fault {
            Fault::LoseReplies => std::future::pending().await,
            Fault::Relayed(delay) => {
                (relayed(delay, result).await).map_err(|_| NodeError::Failed("relay dropped".into()))
            }
            _ => Ok(result),
        }
    }
}

impl Node for FakeNode {
    fn name(&self) -> &str {
        &self.name
    }

    fn standing(&self) -> Standing {
        self.state().standing.clone().unwrap_or(Standing::Usable)
    }

    async fn try_lock(&self, key: &str, value: &str, ttl: Duration, holder: &str) -> Result<Option<u64>, NodeError> {
        self.call(|state, now| {
            state.tries += 1;
            if !holds(state, key, value) {
                if let Some((held, _)) = state.keys.get(key) {
                    if held == SHARED_MARK {
                        state.writer_waits.insert(key.to_owned(), now + WRITER_WAIT);
                    }
                    return None;
                }
                state.keys.insert(key.to_owned(), (value.to_owned(), now + ttl));
            }
            let next = state.counter.map_or(1, |c| c + 1);
            state.counter = Some(next);
            state.records.insert(key.to_owned(), format!("{next}\n0\n{holder}"));
            Some(next)
        })
        .await
    }

    async fn try_share(&self, key: &str, value: &str, ttl: Duration, _: &str) -> Result<Option<u64>, NodeError> {
        self.call(|state, now| {
            state.tries += 1;
            let writer_waits = state.writer_waits.get(key).is_some_and(|until| *until > now);
            match state.keys.get(key) {
                Some((held, _)) if held != SHARED_MARK => return None,
                Some(_) if writer_waits && !holds(state, key, value) => return None,
                None => {
                    state.readers.remove(key);
                }
                Some(_) => {}
            }
            state
                .readers
                .entry(key.to_owned())
                .or_default()
                .insert(value.to_owned(), now + ttl);
            state.settle_readers(key, now);
            Some(*state.counter.get_or_insert(1))
        })
        .await
    }

    async fn try_lock_set(
        &self,
        keys: &[String],
        value: &str,
        ttl: Duration,
        holder: &str,
    ) -> Result<Option<Vec<u64>>, NodeError> {
        self.call(|state, now| {
            state.tries += 1;
            if keys
                .iter()
                .any(|key| state.keys.contains_key(key) && !holds(state, key, value))
            {
                return None;
            }
            let mut counters = Vec::with_capacity(keys.len());
            for key in keys {
                state.keys.insert(key.clone(), (value.to_owned(), now + ttl));
                let next = state.counter.map_or(1, |c| c + 1);
                state.counter = Some(next);
                state.records.insert(key.clone(), format!("{next}\n0\n{holder}"));
                counters.push(next);
            }
            Some(counters)
        })
        .await
    }

    async fn agree_permits(
        &self,
        permits_key: &str,
        slots: &[String],
        n: u32,
        ttl: Duration,
    ) -> Result<Agreement, NodeError> {
        self.call(|state, now| {
            let remembered = state
                .permits
                .get(permits_key)
                .filter(|(_, until)| *until > now)
                .copied();
            if let Some((held, _)) = remembered.filter(|(held, _)| *held != n) {
                return Agreement {
                    held_with: Some(held),
                    slots_held: Vec::new(),
                };
            }
            let until = remembered.map_or(now + ttl, |(_, until)| until.max(now + ttl));
            state.permits.insert(permits_key.to_owned(), (n, until));
            let slots_held = slots.iter().map(|slot| state.keys.contains_key(slot)).collect();
            Agreement {
                held_with: None,
                slots_held,
            }
        })
        .await
    }

    async fn hand_off(&self, key: &str, old: &str, new: &str, ttl: Duration, holder: &str) -> Result<Swap, NodeError> {
        self.call(|state, now| {
            let was_held = holds(state, key, old);
            let waited = state.waited.contains(key);
            if !was_held && !holds(state, key, new) && state.keys.contains_key(key) {
                return Swap {
                    was_held,
                    counter: None,
                    waited,
                };
            }
            state.keys.insert(key.to_owned(), (new.to_owned(), now + ttl));
            let next = state.counter.map_or(1, |c| c + 1);
            state.counter = Some(next);
            state.records.insert(key.to_owned(), format!("{next}\n0\n{holder}"));
            Swap {
                was_held,
                counter: Some(next),
                waited,
            }
        })
        .await
    }

    async fn publish_fence(&self, key: &str, value: &str, counter: u64) -> Result<bool, NodeError> {
        self.call(|state, _| {
            let held = holds(state, key, value);
            if held {
                state.counter = Some(state.counter.unwrap_or(0).max(counter));
            }
            held
        })
        .await
    }

    async fn extend(&self, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
        self.state().extend_calls += 1;
        self.call(|state, now| {
            locks
                .iter()
                .map(|lock| {
                    let held = holds(state, lock.key, lock.value);
                    if held && Mode::of(lock.value) == Mode::Shared {
                        let readers = state.readers.entry(lock.key.to_owned()).or_default();
                        readers.insert(lock.value.to_owned(), now + lock.ttl);
                        state.settle_readers(lock.key, now);
                    } else if held {
                        state
                            .keys
                            .insert(lock.key.to_owned(), (lock.value.to_owned(), now + lock.ttl));
                    }
                    // An election record is extended like a lock: it starts
                    // with the value that wrote it.
                    let record = state.election_records.get_mut(lock.key).filter(|(r, until)| {
                        *until > now && r.starts_with(lock.value.as_bytes()) && r.get(lock.value.len()) == Some(&b'\n')
                    });
                    match record {
                        Some((_, until)) => {
                            *until = now + lock.ttl;
                            true
                        }
                        None => held,
                    }
                })
                .collect()
        })
        .await
    }

    async fn unlock(&self, key: &str, value: &str, announce: Announce) -> Result<bool, NodeError> {
        self.state().unlocks += 1;
        // On a task of its own: as `Node::unlock` requires, the delete is
        // done (after a `Slow` delay too) even when nobody waits for it.
        let (node, key, value) = (self.clone(), key.to_owned(), value.to_owned());
        let unlock = tokio::spawn(async move {
            node.call(|state, now| {
                let held = holds(state, &key, &value);
                if held && Mode::of(&value) == Mode::Shared {
                    if let Some(readers) = state.readers.get_mut(&key) {
                        readers.remove(&value);
                    }
                    state.settle_readers(&key, now);
                    if !state.keys.contains_key(&key) && announce != Announce::No {
                        state.waited.remove(&key);
                    }
                } else if held {
                    state.keys.remove(&key);
                    // Like ROUND: an announcing release clears the mark.
                    if announce != Announce::No {
                        state.waited.remove(&key);
                    }
                }
                held
            })
            .await
        });
        unlock
            .await
            .unwrap_or_else(|e| Err(NodeError::Failed(format!("the unlock task failed: {e}"))))
    }

    async fn inspect(&self, key: &str) -> Result<KeyView, NodeError> {
        self.call(|state, now| {
            let held = state.keys.get(key);
            KeyView {
                value: held.map(|(v, _)| v.clone()),
                ttl: held.map(|(_, expires)| expires.saturating_duration_since(now)),
                fence: state.counter,
                holder: held.and_then(|_| state.records.get(key).cloned()),
                readers: (state.readers.get(key)).map_or(0, |r| r.values().filter(|u| **u > now).count() as u32),
                permits: None,
            }
        })
        .await
    }

    async fn views(&self, keys: &[String]) -> Result<Vec<KeyView>, NodeError> {
        let mut views = Vec::with_capacity(keys.len());
        for key in keys {
            views.push(KeyView {
                fence: None,
                readers: 0,
                permits: None,
                ..self.inspect(key).await?
            });
        }
        Ok(views)
    }

    async fn scan(&self, start: &str, cursor: u64, count: u32) -> Result<(u64, Vec<String>), NodeError> {
        self.call(|state, _| {
            let mut names: Vec<&str> = (state.keys.keys())
                .filter_map(|k| super::buckets::split(k).map(|(_, name)| name))
                .filter(|name| name.starts_with(start))
                .collect();
            names.sort_unstable();
            let from = usize::try_from(cursor).unwrap_or(usize::MAX).min(names.len());
            let to = (from + count as usize).min(names.len());
            let next = if to == names.len() { 0 } else { to as u64 };
            (next, names[from..to].iter().map(|name| (*name).to_owned()).collect())
        })
        .await
    }

    async fn force_unlock(&self, key: &str) -> Result<bool, NodeError> {
        self.call(|state, _| {
            state.records.remove(key);
            state.waited.remove(key);
            state.readers.remove(key);
            state.keys.remove(key).is_some()
        })
        .await
    }

    async fn write_record(
        &self,
        key: &str,
        record_key: &str,
        value: &str,
        record: &[u8],
        ttl: Duration,
    ) -> Result<bool, NodeError> {
        self.call(|state, now| {
            if !holds(state, key, value) {
                return false;
            }
            (state.election_records).insert(record_key.to_owned(), (record.to_vec(), now + ttl));
            true
        })
        .await
    }

    async fn read_record(&self, key: &str, record_key: &str) -> Result<RecordView, NodeError> {
        self.call(|state, now| {
            state.record_reads += 1;
            let value = (state.keys.get(key))
                .filter(|(v, _)| v != SHARED_MARK)
                .map(|(v, _)| v.clone());
            let record = (state.election_records.get(record_key))
                .filter(|(_, until)| *until > now)
                .map(|(r, _)| r.clone());
            RecordView {
                granted_ms: value.as_ref().map(|_| 0),
                value,
                record,
            }
        })
        .await
    }
}
