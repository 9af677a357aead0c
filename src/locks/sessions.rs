//! Sessions and shutdown: open `Hold` sessions are counted (and a
//! tenant's `max_sessions` unit taken), shutdown tells them to release and
//! waits for them; `force_release` takes a lock away and tells the
//! session holding it here.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio::sync::futures::Notified;

use crate::locks::Locks;
use crate::locks::error::{Error, Limit};
use crate::locks::quota::{Kind, Taken};
use crate::locks::who::{self, Who};
use crate::redlock::Node;

/// Why a session's lock was taken away from outside the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Revoked {
    /// `Admin/ForceRelease`.
    ForceReleased,
    /// A `Resign` call for this term (docs/design.md#elections).
    Resigned(u64),
}

/// A counted open session; dropping it ends the count.
pub(crate) struct SessionGuard<N: Node> {
    locks: Arc<Locks<N>>,
    /// The tenant's `max_sessions` unit.
    _quota: Option<Taken>,
}

impl<N: Node> Drop for SessionGuard<N> {
    fn drop(&mut self) {
        self.locks.sessions.fetch_sub(1, Ordering::SeqCst);
        // Wakes a shutdown waiting for the last session.
        self.locks.closing.send_modify(|_| {});
    }
}

impl<N: Node> Locks<N> {
    /// Counts a new session.
    ///
    /// # Errors
    /// `ResourceExhausted` at `max_sessions`, `QuotaExceeded` past the
    /// tenant's; `Unavailable` while shutting down.
    pub(crate) fn open_session(self: &Arc<Self>, who: &Who) -> Result<SessionGuard<N>, Error> {
        // Counted before the check: a shutdown that starts in between sees
        // this session and waits for it.
        let open = self.sessions.fetch_add(1, Ordering::SeqCst);
        let mut guard = SessionGuard {
            locks: self.clone(),
            _quota: None,
        };
        if *self.closing.borrow() {
            return Err(Error::ShuttingDown);
        }
        if open >= self.max_sessions {
            return Err(Error::LimitReached {
                limit: Limit::Sessions,
                count: open,
            });
        }
        if let Some(quota) = &who.quota {
            guard._quota = Some(quota.take(Kind::Sessions)?);
        }
        Ok(guard)
    }

    /// Takes the lock on `resource` away whatever value holds it, never
    /// lowering a fence counter (docs/design.md#listing-and-force-release);
    /// a session holding it here is told at once (`revocations`). Returns
    /// how many masters held it.
    ///
    /// # Errors
    /// `Unavailable` when fewer than a quorum of masters answered.
    pub(crate) async fn force_release(&self, resource: &str, who: &Who, reason: &str) -> Result<usize, Error> {
        let held = self.engine.force_release(resource).await?;
        self.held.forget_name(resource);
        self.reentries.lapse_name(resource).await;
        let _ = self.revoked.send((resource.to_owned(), Revoked::ForceReleased));
        self.followed.touched(resource);
        if tracing::enabled!(target: who::AUDIT, tracing::Level::INFO) {
            tracing::info!(
                target: who::AUDIT,
                event = "force_release",
                tenant = &*who.tenant,
                peer = %who.peer.as_ref().map_or_else(|| "-".to_owned(), ToString::to_string),
                resource = who::resource_of(resource),
                masters_held = held,
                reason,
                "audit"
            );
        }
        Ok(held)
    }

    /// The lock names taken away from now on, and why.
    pub(crate) fn revocations(&self) -> broadcast::Receiver<(String, Revoked)> {
        self.revoked.subscribe()
    }

    /// Whether the daemon is shutting down (new acquisitions are refused).
    pub(crate) fn is_closing(&self) -> bool {
        *self.closing.borrow()
    }

    /// How many sessions are open.
    pub(crate) fn sessions(&self) -> usize {
        self.sessions.load(Ordering::SeqCst)
    }

    /// Resolves at a shutdown that starts after it was enabled (or first
    /// polled): a long wait checks `is_closing` after enabling it. Smaller
    /// than `closing` (an open session keeps one; docs/performance.md, workload (d)).
    pub(crate) fn shutdown_notified(&self) -> Notified<'_> {
        self.shutdown.notified()
    }

    /// Resolves when the daemon starts shutting down (sessions release then).
    pub(crate) fn closing(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.closing.subscribe();
        async move {
            let _ = rx.wait_for(|closing| *closing).await;
        }
    }

    /// Tells every session to release, and waits (at most `grace`) until
    /// they have.
    pub(crate) async fn close_sessions(&self, grace: Duration) {
        self.closing.send_replace(true);
        self.shutdown.notify_waiters();
        let mut rx = self.closing.subscribe();
        let all_closed = async {
            while self.sessions() > 0 {
                if rx.changed().await.is_err() {
                    return;
                }
            }
        };
        if tokio::time::timeout(grace, all_closed).await.is_err() {
            tracing::warn!(open = self.sessions(), "sessions still open after the grace period");
        }
    }
}
