//! Watching a lock (docs/design.md#observe-and-watch): what `Inspect`
//! reports, first at once and then at each change, read on the same
//! schedule as an election's observer (`follow.rs`), each change named:
//! acquired, released, expired, force-released, or readers and permits that
//! came and went.

use std::collections::VecDeque;
use std::sync::Arc;

use futures::FutureExt;
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::locks::Locks;
use crate::locks::follow::Following;
use crate::locks::sessions::Revoked;
use crate::redlock::{Holder, Node};

/// What a watcher saw change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// The state when the watch began.
    Current,
    Acquired,
    Released,
    Expired,
    /// Taken away through this daemon (`Admin/ForceRelease`).
    ForceReleased,
    /// Readers or permits came or went.
    Changed,
}

/// A lock as a watcher sees it.
#[derive(Debug, Clone, Default)]
pub(crate) struct LockState {
    /// A majority holds it.
    pub held: bool,
    /// Who holds it exclusively.
    pub holder: Option<Holder>,
    pub readers: u32,
    pub permits: u32,
    pub permits_out: u32,
}

impl LockState {
    /// The same holder (its TTL aside: every extension changes it).
    fn same_holder(&self, other: &LockState) -> bool {
        match (&self.holder, &other.holder) {
            (Some(a), Some(b)) => a.fencing_token == b.fencing_token && a.since_ms == b.since_ms,
            (None, None) => true,
            _ => false,
        }
    }

    fn same(&self, other: &LockState) -> bool {
        self.same_holder(other)
            && (self.held, self.readers, self.permits, self.permits_out)
                == (other.held, other.readers, other.permits, other.permits_out)
    }
}

/// A lock's watcher.
pub(crate) struct Watcher<N> {
    locks: Arc<Locks<N>>,
    name: String,
    following: Following,
    revoked: broadcast::Receiver<(String, Revoked)>,
    /// The last state read, and when its holder's TTL runs out.
    last: Option<(LockState, Option<Instant>)>,
    /// Changes found by one read, not passed on yet.
    pending: VecDeque<(Change, LockState)>,
}

impl<N: Node> Locks<N> {
    /// Watches lock `name`.
    pub(crate) fn watch(self: &Arc<Self>, name: &str) -> Watcher<N> {
        Watcher {
            following: self.followed.follow(name),
            revoked: self.revocations(),
            locks: self.clone(),
            name: name.to_owned(),
            last: None,
            pending: VecDeque::new(),
        }
    }
}

impl<N: Node> Watcher<N> {
    /// The next change: the current state first.
    pub(crate) async fn next(&mut self) -> (Change, LockState) {
        loop {
            if let Some(change) = self.pending.pop_front() {
                return change;
            }
            let followed = &self.locks.followed;
            let since = match self.last {
                Some(_) => self.following.changed().await,
                None => followed.now(),
            };
            let (engine, name) = (self.locks.engine.clone(), self.name.clone());
            let view = (followed.inspections)
                .read(&self.name, since, &followed.stamps, move || {
                    async move { engine.inspect(&name).await }.boxed()
                })
                .await;
            let now = LockState {
                held: view.held,
                holder: view.holder,
                readers: view.readers,
                permits: view.permits,
                permits_out: view.permits_out,
            };
            let expires = now.holder.as_ref().map(|h| Instant::now() + h.ttl);
            let taken_away = self.taken_away();
            let Some((before, before_expires)) = self.last.replace((now.clone(), expires)) else {
                return (Change::Current, now);
            };
            if before.same(&now) {
                continue;
            }
            if let (Some(gone), false) = (&before.holder, before.same_holder(&now)) {
                let why = if taken_away {
                    Change::ForceReleased
                } else if before_expires.is_some_and(|at| at <= Instant::now()) {
                    Change::Expired
                } else {
                    Change::Released
                };
                let ended = LockState {
                    holder: Some(gone.clone()),
                    ..now.clone()
                };
                self.pending.push_back((why, ended));
            }
            if now.holder.is_some() && !before.same_holder(&now) {
                self.pending.push_back((Change::Acquired, now));
            } else if now.holder.is_none() && before.holder.is_none() {
                self.pending.push_back((Change::Changed, now));
            }
        }
    }

    /// Whether this daemon took the lock away since the last look.
    fn taken_away(&mut self) -> bool {
        let mut taken = false;
        loop {
            match self.revoked.try_recv() {
                Ok((name, Revoked::ForceReleased)) if name == self.name => taken = true,
                Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(_) => return taken,
            }
        }
    }
}

#[cfg(test)]
#[path = "watcher_tests.rs"]
mod tests;
