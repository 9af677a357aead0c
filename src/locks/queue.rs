//! Waiting well (docs/design.md#waiting): within one daemon, the requests waiting for the
//! same resource queue first-in first-out and only the head contends in
//! Redis (the local lock of Spring's RedisLockRegistry). A release published
//! by any daemon wakes the head at once; jittered retry stays the fallback.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use std::time::Duration;

use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use crate::locks::error::{Error, Limit};
use crate::locks::quota::{Kind, Taken};
use crate::locks::who::Who;
use crate::redlock::{Lease, Lifetime};

/// The queues of one daemon, with limits.
pub(crate) struct Waiters {
    state: Mutex<State>,
    per_resource: usize,
    total: usize,
    /// Hand-offs in a row to this daemon's own waiters before a release is
    /// published instead, so waiters on other daemons get their turn.
    max_handoffs_in_row: u32,
    /// How long the queue steps aside after such a published release.
    yield_window: Duration,
    /// Told when a resource gets its first waiter (`true`) and loses its
    /// last, under the queues' lock, so the two alternate: the release
    /// notifications follow (docs/design.md#waiting).
    interest: std::sync::OnceLock<Interest>,
}

/// See `Waiters::interest`.
pub(crate) type Interest = Box<dyn Fn(&str, bool) + Send + Sync>;

#[derive(Default)]
struct State {
    queues: HashMap<String, Queue>,
    waiting: usize,
    next_ticket: u64,
}

struct Queue {
    tickets: VecDeque<u64>,
    /// The `owner` each ticket's request named (for `Inspect`).
    owners: HashMap<u64, String>,
    /// Notified whenever the head leaves: the next one checks if it is head.
    head_left: Arc<Notify>,
    /// Notified when a release of this resource was published.
    released: Arc<Notify>,
    /// The head's standing offer to take the lock over directly.
    offer: Option<Offer>,
    /// The last head left holding the lock: the next head need not try
    /// before that holder's release hands the lock over (or is published).
    held_here: bool,
    /// Until then the head does not try: the release that ended a streak of
    /// hand-offs was just published, and a waiter on another daemon (one
    /// was refused: that is what the streak counts) gets the first try.
    yield_until: Option<Instant>,
}

/// The head of a queue, ready to be handed the lock by a local release.
pub(crate) struct Offer {
    ticket: u64,
    /// The TTL (and lock delay) the head asked for.
    pub lifetime: Lifetime,
    /// The head's holder tag (`Engine::holder_tag`).
    pub holder: String,
    /// Where the lock goes; closed when the head has left.
    pub to: oneshot::Sender<Lease>,
}

/// A place in a resource's queue; leaving (drop) lets the next one in.
pub(crate) struct Place {
    waiters: Arc<Waiters>,
    resource: String,
    ticket: u64,
    head_left: Arc<Notify>,
    released: Arc<Notify>,
    /// The tenant's `max_waiters` unit.
    _quota: Option<Taken>,
}

impl Waiters {
    /// Queues of at most `per_resource` waiters each, `total` in all; at
    /// most 16 local hand-offs in a row, then 50 ms aside (see
    /// `with_handoffs`).
    pub(crate) fn new(per_resource: usize, total: usize) -> Waiters {
        Waiters {
            state: Mutex::new(State::default()),
            per_resource,
            total,
            max_handoffs_in_row: 16,
            yield_window: Duration::from_millis(50),
            interest: std::sync::OnceLock::new(),
        }
    }

    /// Tells `interest` when a resource gets its first waiter and loses
    /// its last (once; later calls are ignored).
    pub(crate) fn on_interest(&self, interest: Interest) {
        let _ = self.interest.set(interest);
    }

    /// At most `n` hand-offs in a row to local waiters (0: never hand off);
    /// after the release that ends such a streak is published, the queue's
    /// head waits `yield_window` before it tries, so the waiter on another
    /// daemon has a head start rather than racing this daemon for it.
    pub(crate) fn with_handoffs(mut self, n: u32, yield_window: Duration) -> Waiters {
        self.max_handoffs_in_row = n;
        self.yield_window = yield_window;
        self
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Joins the back of `resource`'s queue.
    ///
    /// # Errors
    /// `ResourceExhausted` when the resource's queue or all queues are
    /// full, `QuotaExceeded` past the tenant's `max_waiters`.
    pub(crate) fn join(self: &Arc<Self>, resource: &str, who: &Who) -> Result<Place, Error> {
        let quota = who.quota.as_ref().map(|q| q.take(Kind::Waiters)).transpose()?;
        let mut state = self.state();
        if state.waiting >= self.total {
            return Err(Error::LimitReached {
                limit: Limit::Waiters,
                count: state.waiting,
            });
        }
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        if !state.queues.contains_key(resource)
            && let Some(interest) = self.interest.get()
        {
            interest(resource, true);
        }
        let queue = state.queues.entry(resource.to_owned()).or_insert_with(|| Queue {
            tickets: VecDeque::new(),
            owners: HashMap::new(),
            head_left: Arc::new(Notify::new()),
            released: Arc::new(Notify::new()),
            offer: None,
            held_here: false,
            yield_until: None,
        });
        if queue.tickets.len() >= self.per_resource {
            return Err(Error::LimitReached {
                limit: Limit::WaitersPerResource,
                count: queue.tickets.len(),
            });
        }
        queue.tickets.push_back(ticket);
        queue.owners.insert(ticket, who.owner.clone());
        let slot = Place {
            waiters: self.clone(),
            resource: resource.to_owned(),
            ticket,
            head_left: queue.head_left.clone(),
            released: queue.released.clone(),
            _quota: quota,
        };
        state.waiting += 1;
        Ok(slot)
    }

    /// A release of `resource` was published: wake whoever waits for it.
    pub(crate) fn released(&self, resource: &str) {
        if let Some(queue) = self.state().queues.get(resource) {
            // notify_one stores a permit when the head is between attempts,
            // so a release during an attempt is not lost.
            queue.released.notify_one();
        }
    }

    /// The head's offer for `resource`, if it made one; taking it ends it.
    /// `None` (release and announce as usual) also when the lock being
    /// released was itself the end of `max_handoffs_in_row` hand-offs
    /// (`streak`), so waiters on other daemons get their turn. (`Locks`
    /// counts a hand-off in the streak only when a waiter elsewhere was
    /// refused; see `HandOff::waited`.) Ending a streak, the queue steps
    /// aside (`step_aside`).
    pub(crate) fn take_offer(&self, resource: &str, streak: u32) -> Option<Offer> {
        if streak >= self.max_handoffs_in_row {
            self.step_aside(resource, streak);
            return None;
        }
        let mut state = self.state();
        let queue = state.queues.get_mut(resource)?;
        queue.offer.take().filter(|o| !o.to.is_closed())
    }

    /// When the lock being released ended a streak of `streak` hand-offs,
    /// the queue's head tries no earlier than the yield window from now
    /// (`Place::yielding`). Without that, the head, woken by the same
    /// announcement as the waiter elsewhere, wins the race about as often
    /// as not, and that waiter can lose streak after streak. Called by
    /// `take_offer`, so the head does not try during the release, and again
    /// once the release is through, so the waiter elsewhere, which hears
    /// of it about then, has all of the window.
    pub(crate) fn step_aside(&self, resource: &str, streak: u32) {
        if streak > 0
            && streak >= self.max_handoffs_in_row
            && let Some(queue) = self.state().queues.get_mut(resource)
        {
            queue.yield_until = Some(Instant::now() + self.yield_window);
        }
    }

    /// Release notifications were lost: wake every queue's head.
    pub(crate) fn released_all(&self) {
        for queue in self.state().queues.values() {
            queue.released.notify_one();
        }
    }

    /// How many requests wait in all.
    pub(crate) fn waiting(&self) -> usize {
        self.state().waiting
    }

    /// The `owner`s of the requests waiting for `resource`, first in line
    /// first.
    pub(crate) fn owners(&self, resource: &str) -> Vec<String> {
        let state = self.state();
        let Some(queue) = state.queues.get(resource) else {
            return Vec::new();
        };
        queue
            .tickets
            .iter()
            .map(|t| queue.owners.get(t).cloned().unwrap_or_default())
            .collect()
    }

    /// Whether anyone waits for `resource`.
    pub(crate) fn has_waiters(&self, resource: &str) -> bool {
        self.state().queues.contains_key(resource)
    }
}

impl Place {
    fn is_head(&self) -> bool {
        let state = self.waiters.state();
        state.queues.get(&self.resource).and_then(|q| q.tickets.front()) == Some(&self.ticket)
    }

    /// Resolves once this slot is at the head of its queue.
    pub(crate) async fn until_head(&self) {
        loop {
            // Registered before the check, so a departure in between is seen.
            let left = self.head_left.notified();
            if self.is_head() {
                return;
            }
            left.await;
        }
    }

    /// Notified when a release of the resource was published.
    pub(crate) fn released(&self) -> &Notify {
        &self.released
    }

    /// Offers (as head) to be handed the lock with `lifetime` by a release in
    /// this daemon; the lease arrives on the receiver. Also says whether
    /// the head before left holding the lock (see `leave_holding`).
    pub(crate) fn offer(&self, lifetime: Lifetime, holder: String) -> (oneshot::Receiver<Lease>, bool) {
        let (to, from) = oneshot::channel();
        let mut state = self.waiters.state();
        let mut held_here = false;
        if let Some(queue) = state.queues.get_mut(&self.resource) {
            queue.offer = Some(Offer {
                ticket: self.ticket,
                lifetime,
                holder,
                to,
            });
            held_here = std::mem::take(&mut queue.held_here);
        }
        (from, held_here)
    }

    /// Until when the head should not try (see `Waiters::step_aside`), if
    /// that is still ahead.
    pub(crate) fn yielding(&self) -> Option<Instant> {
        let state = self.waiters.state();
        let until = state.queues.get(&self.resource)?.yield_until?;
        (until > Instant::now()).then_some(until)
    }

    /// Leaves the queue as the new holder of the lock.
    pub(crate) fn leave_holding(self) {
        if let Some(queue) = self.waiters.state().queues.get_mut(&self.resource) {
            queue.held_here = true;
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut state = self.waiters.state();
        if let Some(queue) = state.queues.get_mut(&self.resource) {
            queue.tickets.retain(|t| *t != self.ticket);
            queue.owners.remove(&self.ticket);
            if queue.offer.as_ref().is_some_and(|o| o.ticket == self.ticket) {
                queue.offer = None;
            }
            if queue.tickets.is_empty() {
                state.queues.remove(&self.resource);
                if let Some(interest) = self.waiters.interest.get() {
                    interest(&self.resource, false);
                }
            }
        }
        state.waiting -= 1;
        self.head_left.notify_waiters();
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
