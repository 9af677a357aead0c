//! Which lane each slot's unanswered requests are on, on a cluster position
//! (docs/design.md#cluster-positions): one at a time, so a release never
//! overtakes its lock wherever the slot moves.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::sync::Notify;

use crate::redlock::buckets;

/// The lane index of a slot's own lane (batches per slot, with their keys
/// declared: before the probe turns batches by primary on, and on Redis 6.2).
pub(super) const SLOT_LANE: u16 = u16::MAX;

/// Per slot, the lane its unanswered requests went to and how many there
/// are (`lane << 32 | count`): a request takes a ticket for its slot and
/// lane, which waits while requests of the slot are unanswered on another
/// lane, and gives it back when it is answered (or never sent). Within one
/// lane a slot's requests keep their order, as a standalone master's do.
pub(super) struct Tickets {
    slots: Box<[AtomicU64]>,
    /// Requests waiting for a slot to drain, and their wake-up.
    waiting: AtomicUsize,
    drained: Notify,
}

/// A request's place on its slot's lane, given back on drop.
pub(super) struct Ticket {
    tickets: Arc<Tickets>,
    slot: u16,
}

impl Tickets {
    pub(super) fn new() -> Tickets {
        Tickets {
            slots: (0..buckets::BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            waiting: AtomicUsize::new(0),
            drained: Notify::new(),
        }
    }

    /// Takes a place for `slot` on lane `lane` if its slot has no request
    /// unanswered on another lane.
    fn try_take(&self, slot: u16, lane: u16) -> bool {
        let state = &self.slots[usize::from(slot)];
        let mut now = state.load(Ordering::SeqCst);
        loop {
            let (on, count) = ((now >> 32) as u16, now & 0xffff_ffff);
            if count != 0 && on != lane {
                return false;
            }
            let next = (u64::from(lane) << 32) | (count + 1);
            match state.compare_exchange_weak(now, next, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return true,
                Err(seen) => now = seen,
            }
        }
    }

    /// A ticket for a request of `slot` on lane `lane` if it need not wait.
    pub(super) fn ticket_now(self: &Arc<Self>, slot: u16, lane: u16) -> Option<Ticket> {
        self.try_take(slot, lane).then(|| Ticket {
            tickets: Arc::clone(self),
            slot,
        })
    }

    /// A ticket for a request of `slot` on lane `lane`: at once, or once
    /// the slot's requests on another lane are all answered.
    pub(super) async fn ticket(self: &Arc<Self>, slot: u16, lane: u16) -> Ticket {
        if !self.try_take(slot, lane) {
            // Counted while it waits, however the wait ends (a caller that
            // gives up drops it).
            let _waiting = Waiting::new(&self.waiting);
            loop {
                let drained = self.drained.notified();
                let mut drained = std::pin::pin!(drained);
                drained.as_mut().enable();
                if self.try_take(slot, lane) {
                    break;
                }
                drained.await;
            }
        }
        Ticket {
            tickets: Arc::clone(self),
            slot,
        }
    }

    /// Gives back a place on `slot`'s lane, waking those waiting for a
    /// slot to drain when it was the last.
    fn give_back(&self, slot: u16) {
        let before = self.slots[usize::from(slot)].fetch_sub(1, Ordering::SeqCst);
        if before & 0xffff_ffff == 1 && self.waiting.load(Ordering::SeqCst) > 0 {
            self.drained.notify_waiters();
        }
    }
}

/// One request waiting for a slot to drain, counted until dropped.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn new(waiting: &'a AtomicUsize) -> Waiting<'a> {
        waiting.fetch_add(1, Ordering::SeqCst);
        Waiting(waiting)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.tickets.give_back(self.slot);
    }
}

#[cfg(test)]
#[path = "tickets_tests.rs"]
mod tests;
