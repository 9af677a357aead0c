//! The way from a `Hold` session to its response stream: a small queue
//! shared by the session (`Outbox`) and the stream tonic sends from
//! (`HoldReplies`).
//!
//! It takes the place of a tokio channel, whose 32-slot block and semaphore
//! cost about 800 bytes per open session (docs/performance.md, workload (d)); this costs about
//! 100. A session sends only a handful of replies in its life, so sending
//! never waits: a reply that must arrive (ACQUIRED, LOST, RELEASED, an
//! error) is always queued, and an EXTENDED is dropped when `ROOM` replies
//! are already waiting for a slow reader, so that the client never counts
//! validity from a stale one. The session's last word (`end`) also drops
//! the EXTENDED replies still waiting: the client learns of LOST at once.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use futures::Stream;

use crate::api::proto::HoldResponse;
use crate::locks::session::{Delivery, Refused};

/// One message down the stream (a `Hold`'s, by default; a `Campaign`'s too).
pub(crate) type Reply<M = HoldResponse> = Result<M, tonic::Status>;

/// How many replies may wait before an `IfRoom` one is dropped.
pub(crate) const ROOM: usize = 8;

struct Shared<M> {
    /// Boxed: a `Status` is large, and the queue keeps its capacity. The
    /// flag marks an `IfRoom` reply (one `Last` may drop).
    queue: VecDeque<(Box<Reply<M>>, bool)>,
    /// The stream, waiting for a reply.
    reader: Option<Waker>,
    /// The session, waiting in `closed`.
    watcher: Option<Waker>,
    session_gone: bool,
    stream_gone: bool,
}

impl<M> Default for Shared<M> {
    fn default() -> Shared<M> {
        Shared {
            queue: VecDeque::new(),
            reader: None,
            watcher: None,
            session_gone: false,
            stream_gone: false,
        }
    }
}

/// A new outbox and the stream of what is sent to it.
pub(crate) fn outbox<M>() -> (Outbox<M>, HoldReplies<M>) {
    let shared = Arc::new(Mutex::new(Shared::default()));
    (Outbox(shared.clone()), HoldReplies(shared))
}

fn lock<M>(shared: &Mutex<Shared<M>>) -> MutexGuard<'_, Shared<M>> {
    // Nothing panics while holding it; a poisoned queue is still a queue.
    shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The session's end. Dropping it ends the stream after what is queued.
pub(crate) struct Outbox<M = HoldResponse>(Arc<Mutex<Shared<M>>>);

impl<M: Send + 'static> Outbox<M> {
    /// Queues `reply`, however many wait; false when the stream is gone.
    /// At most a few replies are sent this way in a session's life.
    pub(crate) fn send(&self, reply: Reply<M>) -> bool {
        self.push(reply, Delivery::Always).is_ok()
    }

    /// Queues `reply` as `how` says.
    ///
    /// # Errors
    /// `Closed` when the stream is gone; `Full` for an `IfRoom` reply with
    /// `ROOM` replies waiting.
    pub(crate) fn push(&self, reply: Reply<M>, how: Delivery) -> Result<(), Refused> {
        let reader = {
            let mut shared = lock(&self.0);
            if shared.stream_gone {
                return Err(Refused::Closed);
            }
            match how {
                Delivery::IfRoom if shared.queue.len() >= ROOM => return Err(Refused::Full),
                Delivery::Last => shared.queue.retain(|(_, offered)| !offered),
                Delivery::IfRoom | Delivery::Always => {}
            }
            shared.queue.push_back((Box::new(reply), how == Delivery::IfRoom));
            shared.reader.take()
        };
        if let Some(reader) = reader {
            reader.wake();
        }
        Ok(())
    }

    /// Whether the stream is gone.
    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.0).stream_gone
    }

    /// Resolves once the stream is gone. One waiter at a time: a second
    /// future polled meanwhile takes the wake-up from the first. (A session
    /// has one: the acquisition's task until it answers, then the session's
    /// own, whose every poll takes the slot back.)
    pub(crate) fn closed(&self) -> impl Future<Output = ()> + Send + '_ {
        std::future::poll_fn(|cx| poll_closed(&self.0, cx))
    }

    /// `closed`, owning what it needs (for a task of its own).
    pub(crate) fn closed_owned(&self) -> impl Future<Output = ()> + Send + 'static {
        let shared = self.0.clone();
        std::future::poll_fn(move |cx| poll_closed(&shared, cx))
    }
}

/// Keeps `cx`'s waker in `slot`, unless the one there already wakes the
/// same task.
fn remember(slot: &mut Option<std::task::Waker>, cx: &Context<'_>) {
    if !slot.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
        *slot = Some(cx.waker().clone());
    }
}

fn poll_closed<M>(shared: &Mutex<Shared<M>>, cx: &mut Context<'_>) -> Poll<()> {
    let mut shared = lock(shared);
    if shared.stream_gone {
        return Poll::Ready(());
    }
    remember(&mut shared.watcher, cx);
    Poll::Pending
}

impl<M> Drop for Outbox<M> {
    fn drop(&mut self) {
        let reader = {
            let mut shared = lock(&self.0);
            shared.session_gone = true;
            // The session's task is done: keep nothing that would keep its
            // memory while the stream drains.
            shared.watcher = None;
            shared.reader.take()
        };
        if let Some(reader) = reader {
            reader.wake();
        }
    }
}

/// The stream's end: what tonic sends to the client.
pub(crate) struct HoldReplies<M = HoldResponse>(Arc<Mutex<Shared<M>>>);

impl<M> Stream for HoldReplies<M> {
    type Item = Reply<M>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Reply<M>>> {
        let mut shared = lock(&self.0);
        if let Some((reply, _)) = shared.queue.pop_front() {
            return Poll::Ready(Some(*reply));
        }
        if shared.session_gone {
            return Poll::Ready(None);
        }
        remember(&mut shared.reader, cx);
        Poll::Pending
    }
}

impl<M> Drop for HoldReplies<M> {
    fn drop(&mut self) {
        let watcher = {
            let mut shared = lock(&self.0);
            shared.stream_gone = true;
            shared.queue.clear();
            shared.watcher.take()
        };
        if let Some(watcher) = watcher {
            watcher.wake();
        }
    }
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;
