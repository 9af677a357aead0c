//! Following an election or a lock from outside it
//! (docs/design.md#observe-and-watch): an observer reads the state a
//! majority of masters agree on, first at once, then again whenever a
//! change is heard of — made through this daemon, or announced on the
//! bucket's channel by another — and at least once per `lock.watch_period`
//! as a backstop, so that a missed message never leaves it wrong for longer.
//! Each observer passes a state on only when it differs from the last one
//! it passed on, and never one with a lower term than it already passed on.
//! Observers of one name woken together share one read (`shared_reads.rs`):
//! backstop ticks fall on one grid for every follower, so they wake together
//! too.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::FutureExt;
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::locks::Locks;
use crate::locks::error::Error;
use crate::locks::shared_reads::{SharedReads, Since, Stamps};
use crate::redlock::election::{Leader, Term};
use crate::redlock::{Inspection, Node};

/// Told when a followed name is followed for the first time (`true`) or
/// no longer (`false`): the release channel of its bucket is subscribed
/// while anyone here follows it.
pub(crate) type OnInterest = Box<dyn Fn(&str, bool) + Send + Sync>;

/// The names followed in this daemon, and the changes heard of.
pub(crate) struct Followed {
    /// Names that changed, with the change's stamp; an empty name:
    /// anything may have (a missed announcement).
    changes: broadcast::Sender<(Arc<str>, u64)>,
    /// Stamps changes and reads (`shared_reads.rs`).
    pub(super) stamps: Stamps,
    /// How many follow each name.
    counts: Mutex<HashMap<String, usize>>,
    /// How many follow any: grants and releases look at it alone when
    /// nobody follows (the hot path pays one atomic load).
    followers: AtomicUsize,
    interest: OnceLock<OnInterest>,
    /// The backstop: a state is read again at least this often, at the
    /// ticks `epoch + k * period`.
    pub(crate) period: Duration,
    epoch: Instant,
    /// The latest read of each observed election, and of each watched lock.
    pub(super) leaders: SharedReads<Result<Option<Term>, crate::redlock::Error>>,
    pub(super) inspections: SharedReads<Inspection>,
    /// The longest TTL: a record proclaimed from outside its session lives
    /// at most this long unless the session extends it.
    pub(crate) max_ttl: Duration,
}

impl Followed {
    pub(crate) fn new(period: Duration, max_ttl: Duration) -> Followed {
        Followed {
            changes: broadcast::channel(1024).0,
            counts: Mutex::default(),
            followers: AtomicUsize::new(0),
            interest: OnceLock::new(),
            stamps: Stamps::default(),
            period,
            epoch: Instant::now(),
            leaders: SharedReads::default(),
            inspections: SharedReads::default(),
            max_ttl,
        }
    }

    /// Sets who hears of names followed and no longer followed (once).
    pub(crate) fn on_interest(&self, interest: OnInterest) {
        let _ = self.interest.set(interest);
    }

    /// Lock or election `name` may have changed (`None`: anything may have).
    pub(crate) fn changed(&self, name: Option<&str>) {
        let _ = self.changes.send((name.unwrap_or("").into(), self.stamps.next()));
    }

    /// A lock granted or released through this daemon: its watchers look,
    /// if it has any.
    pub(crate) fn touched(&self, name: &str) {
        if self.followers.load(Ordering::Relaxed) > 0 {
            self.changed(Some(name));
        }
    }

    /// How many observers and watchers are open.
    pub(crate) fn open(&self) -> usize {
        self.followers.load(Ordering::Relaxed)
    }

    pub(super) fn follow(self: &Arc<Self>, name: &str) -> Following {
        self.followers.fetch_add(1, Ordering::Relaxed);
        let first = {
            let mut counts = self.counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let count = counts.entry(name.to_owned()).or_default();
            *count += 1;
            *count == 1
        };
        if first && let Some(interest) = self.interest.get() {
            interest(name, true);
        }
        Following {
            followed: self.clone(),
            name: name.to_owned(),
            changes: self.changes.subscribe(),
        }
    }
}

impl Followed {
    /// Only reads that start from now on.
    pub(super) fn now(&self) -> Since {
        Since::Change(self.stamps.next())
    }

    /// The next backstop tick after now.
    fn next_tick(&self) -> Instant {
        let period = self.period.max(Duration::from_millis(1));
        let since = Instant::now().saturating_duration_since(self.epoch);
        let ticks = since.as_nanos() / period.as_nanos() + 1;
        let at = u64::try_from(ticks * period.as_nanos()).unwrap_or(u64::MAX);
        self.epoch + Duration::from_nanos(at)
    }
}

/// One follower's hold on a name; dropping it stops following.
pub(crate) struct Following {
    followed: Arc<Followed>,
    name: String,
    changes: broadcast::Receiver<(Arc<str>, u64)>,
}

impl Following {
    /// Waits until the name may have changed, or the next backstop tick
    /// (at most one period away); says which reads see the change.
    pub(super) async fn changed(&mut self) -> Since {
        let tick = self.followed.next_tick();
        let period = tokio::time::sleep_until(tick);
        tokio::pin!(period);
        loop {
            tokio::select! {
                () = &mut period => return Since::Tick(tick),
                heard = self.changes.recv() => match heard {
                    Ok((name, stamp)) if name.is_empty() || *name == *self.name => return Since::Change(stamp),
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => return self.followed.now(),
                    Err(broadcast::error::RecvError::Closed) => {
                        period.await;
                        return Since::Tick(tick);
                    }
                },
            }
        }
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        self.followed.followers.fetch_sub(1, Ordering::Relaxed);
        let last = {
            let mut counts = self
                .followed
                .counts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let count = counts.entry(self.name.clone()).or_default();
            *count = count.saturating_sub(1);
            let last = *count == 0;
            if last {
                counts.remove(&self.name);
            }
            last
        };
        if last {
            self.followed.leaders.forget(&self.name);
            self.followed.inspections.forget(&self.name);
        }
        if last && let Some(interest) = self.followed.interest.get() {
            interest(&self.name, false);
        }
    }
}

/// An election's observer.
pub(crate) struct Observer<N> {
    locks: Arc<Locks<N>>,
    name: String,
    following: Following,
    /// The last state passed on (`None` before the first).
    last: Option<Option<Leader>>,
    /// The highest term passed on.
    highest: u64,
    /// First reads that found no quorum.
    first_tries: u32,
}

/// How many reads an observer's first state may take before it is an error.
const FIRST_READ_TRIES: u32 = 3;

impl<N: Node> Locks<N> {
    /// Observes election lock `name`.
    pub(crate) fn observe(self: &Arc<Self>, name: &str) -> Observer<N> {
        Observer {
            following: self.followed.follow(name),
            locks: self.clone(),
            name: name.to_owned(),
            last: None,
            highest: 0,
            first_tries: 0,
        }
    }
}

impl<N: Node> Observer<N> {
    /// The next state to pass on: the current one first, then each change.
    /// A read without a majority is retried at the next change or period.
    ///
    /// # Errors
    /// `Unavailable` for the very first state only, when three reads in a
    /// row found fewer than a majority answering (an observer starts from a
    /// known state).
    pub(crate) async fn next(&mut self) -> Result<Option<Leader>, Error> {
        loop {
            let followed = &self.locks.followed;
            let since = match self.last {
                Some(_) => self.following.changed().await,
                None => followed.now(),
            };
            let (engine, name) = (self.locks.engine.clone(), self.name.clone());
            let read = (followed.leaders)
                .read(&self.name, since, &followed.stamps, move || {
                    async move { engine.leader(&name).await }.boxed()
                })
                .await
                .map(|t| t.map(|t| t.leader));
            let state = match read {
                Ok(state) => state,
                // A first read is tried a few times (a busy master may miss
                // one round) before the observer is told there is no quorum.
                Err(error) if self.last.is_none() => {
                    self.first_tries += 1;
                    if self.first_tries >= FIRST_READ_TRIES {
                        return Err(error.into());
                    }
                    tokio::time::sleep(self.locks.node_timeout() * 2).await;
                    continue;
                }
                Err(_) => continue,
            };
            if self.last.as_ref() == Some(&state) {
                continue;
            }
            if let Some(leader) = &state {
                if leader.term < self.highest {
                    continue;
                }
                self.highest = leader.term;
            }
            if self.last.is_some() {
                self.locks.metrics.leader_changed();
            }
            self.last = Some(state.clone());
            return Ok(state);
        }
    }
}
