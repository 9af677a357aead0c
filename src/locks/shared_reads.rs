//! One read per followed name at a time (docs/design.md#observe-and-watch):
//! every observer (or watcher) of a name woken by the same change, or by
//! the same backstop tick, takes the same read of the masters instead of
//! one each. A follower woken by a change needs a read that started after
//! the change was heard of; one woken by a tick, a read that started at the
//! tick or later. Changes and reads are stamped from one counter, so "after"
//! is exact; the latest read of the name is joined when it qualifies, in
//! flight or done, and a new one starts otherwise.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use tokio::time::Instant;

/// The reads a follower may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Since {
    /// Started after the change stamped so (`Stamps::next`) was heard of.
    Change(u64),
    /// Started at this backstop tick or later.
    Tick(Instant),
}

/// The counter changes and reads are stamped from.
#[derive(Debug, Default)]
pub(crate) struct Stamps(AtomicU64);

impl Stamps {
    /// A stamp above every one handed out before.
    pub(crate) fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }
}

/// A read, stamped when it started.
struct Read<T> {
    stamp: u64,
    started: Instant,
    answer: Shared<BoxFuture<'static, T>>,
}

impl<T> Read<T> {
    fn serves(&self, since: Since) -> bool {
        match since {
            Since::Change(stamp) => self.stamp > stamp,
            Since::Tick(tick) => self.started >= tick,
        }
    }
}

/// The latest read of each followed name.
pub(crate) struct SharedReads<T: Clone> {
    latest: Mutex<HashMap<String, Read<T>>>,
}

impl<T: Clone> Default for SharedReads<T> {
    fn default() -> Self {
        SharedReads {
            latest: Mutex::default(),
        }
    }
}

impl<T: Clone + Send + Sync + 'static> SharedReads<T> {
    /// What a read of `name` that serves `since` found: the latest one's
    /// answer when it does, or a new read's (`read`, stamped from `stamps`).
    pub(crate) async fn read(
        &self,
        name: &str,
        since: Since,
        stamps: &Stamps,
        read: impl FnOnce() -> BoxFuture<'static, T>,
    ) -> T {
        let answer = {
            let mut latest = self.latest();
            match latest.get(name) {
                Some(last) if last.serves(since) => last.answer.clone(),
                _ => {
                    // Stamped before it starts (when first polled, just
                    // below): whatever it serves, its real start serves too.
                    let (stamp, started) = (stamps.next(), Instant::now());
                    let answer = read().shared();
                    let fresh = Read {
                        stamp,
                        started,
                        answer: answer.clone(),
                    };
                    latest.insert(name.to_owned(), fresh);
                    answer
                }
            }
        };
        answer.await
    }

    /// Nobody here follows `name` any more.
    pub(crate) fn forget(&self, name: &str) {
        self.latest().remove(name);
    }

    fn latest(&self) -> MutexGuard<'_, HashMap<String, Read<T>>> {
        self.latest.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
#[path = "shared_reads_tests.rs"]
mod tests;
