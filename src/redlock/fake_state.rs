//! The state of the in-memory node of `fake.rs`: keys with their deadlines,
//! the fence counter, shared holders, permits and election records, and the
//! counts tests read.

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use super::Mode;
use super::node::{SHARED_MARK, Standing};

/// A scripted fault on a fake node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Fault {
    /// Answers at once.
    #[default]
    None,
    /// Refuses every command at once, like a dead node.
    Down,
    /// Answers after this delay.
    Slow(Duration),
    /// Applies every command, then never answers: the reply is lost.
    LoseReplies,
    /// Answers after this delay, through two tasks of the daemon's (as a
    /// master's answer comes: `relayed`).
    Relayed(Duration),
}

#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) keys: HashMap<String, (String, Instant)>,
    /// Holder records by key (`counter\n0\nholder`: the fake has no clock).
    pub(super) records: HashMap<String, String>,
    pub(super) counter: Option<u64>,
    pub(super) fault: Fault,
    pub(super) standing: Option<Standing>,
    pub(super) unlocks: usize,
    pub(super) tries: usize,
    pub(super) extend_calls: usize,
    /// Election reads (`read_record`).
    pub(super) record_reads: usize,
    /// Locks marked as waited for by another daemon's refused attempt
    /// (`mark_waited_elsewhere`), until an announcing unlock. This node's
    /// own refusals are its daemon's: they do not count (as in Redis).
    pub(super) waited: std::collections::HashSet<String>,
    /// Shared holders by key, each until its deadline; the key itself
    /// holds `SHARED_MARK` until the last one's.
    pub(super) readers: HashMap<String, HashMap<String, Instant>>,
    /// Until when an exclusive attempt refused by readers keeps new
    /// readers out, by key.
    pub(super) writer_waits: HashMap<String, Instant>,
    /// Semaphores' numbers of permits, until when each is remembered.
    pub(super) permits: HashMap<String, (u32, Instant)>,
    /// Election records by key, each until its deadline.
    pub(super) election_records: HashMap<String, (Vec<u8>, Instant)>,
}

/// Whether `value` holds `key` (for a shared value: among its readers).
pub(super) fn holds(state: &State, key: &str, value: &str) -> bool {
    match Mode::of(value) {
        Mode::Exclusive => state.keys.get(key).is_some_and(|(v, _)| v == value),
        Mode::Shared => {
            state.keys.get(key).is_some_and(|(v, _)| v == SHARED_MARK)
                && (state.readers.get(key))
                    .and_then(|r| r.get(value))
                    .is_some_and(|until| *until > Instant::now())
        }
    }
}

/// How long a refused exclusive attempt keeps new readers out in the fake.
pub(super) const WRITER_WAIT: Duration = Duration::from_millis(500);

impl State {
    /// Drops expired readers of `key`; sets the key's mark to live until
    /// the last one's deadline, or removes it with none left.
    pub(super) fn settle_readers(&mut self, key: &str, now: Instant) {
        let readers = self.readers.entry(key.to_owned()).or_default();
        readers.retain(|_, until| *until > now);
        match readers.values().max().copied() {
            Some(last) => {
                self.keys.insert(key.to_owned(), (SHARED_MARK.to_owned(), last));
            }
            None => {
                self.readers.remove(key);
                if self.keys.get(key).is_some_and(|(v, _)| v == SHARED_MARK) {
                    self.keys.remove(key);
                }
            }
        }
    }
}

/// `value` after `after`, passed on through two tasks, as a master's
/// answer comes through the connection's task and then a batch's: whoever
/// waits for it sees it only once both have run (`Fault::Relayed`).
pub(super) fn relayed<T: Send + 'static>(after: Duration, value: T) -> oneshot::Receiver<T> {
    let (first, relay) = oneshot::channel();
    let (second, answer) = oneshot::channel();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        let _ = first.send(value);
    });
    tokio::spawn(async move {
        if let Ok(value) = relay.await {
            let _ = second.send(value);
        }
    });
    answer
}
