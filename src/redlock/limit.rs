//! Time limits that a late timer cannot cut short (docs/design.md#late-timers):
//! a limit counts the time the daemon could run, so an answer that came
//! while the daemon itself was descheduled (a CPU limit throttling it, a
//! busy host) is still read, and a healthy master is not taken for a slow one.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// A timer that fires later than this after its deadline was held up by
/// the daemon, not by what it waits for: a timer wakes on a millisecond
/// tick, and a runtime that is not starved polls it within a few more.
pub(crate) const LATE: Duration = Duration::from_millis(2);

/// A limit on a wait, judged by the time the daemon could run.
///
/// When its timer fires more than [`LATE`] after the deadline, the daemon
/// could not run for about that long: whatever it waits for may have
/// answered meanwhile, its answer still on its way through the daemon's
/// own tasks (the connection's, then a batch's). So the limit is not up
/// yet: the timer goes again for as long as it was late, and the wait ends
/// only when a timer fires on time. The extra time is at most the limit
/// again, so a wait never takes more than twice its limit in wall time
/// (and one on time, while the daemon runs, exactly its limit).
/// Validity is never counted from a limit but from the real time elapsed
/// (docs/design.md#acquire): a longer wait only leaves less of it.
#[derive(Debug)]
pub(crate) struct Limit {
    sleep: Pin<Box<Sleep>>,
    /// How much longer the wait may still be made for lateness.
    credit: Duration,
    passed: bool,
}

impl Limit {
    /// A limit of `limit` from now.
    pub(crate) fn new(limit: Duration) -> Limit {
        Limit {
            sleep: Box::pin(tokio::time::sleep(limit)),
            credit: limit,
            passed: false,
        }
    }

    /// Ready once the limit has passed on a timer that fired on time (or
    /// every credit for lateness is used up).
    pub(crate) fn poll_passed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.passed {
            return Poll::Ready(());
        }
        loop {
            ready!(self.sleep.as_mut().poll(cx));
            let now = Instant::now();
            let late = now.saturating_duration_since(self.sleep.deadline());
            if late <= LATE || self.credit.is_zero() {
                self.passed = true;
                return Poll::Ready(());
            }
            let again = late.min(self.credit);
            self.credit -= again;
            self.sleep.as_mut().reset(now + again);
        }
    }
}

/// The limit ran out before the future was ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no answer within the time limit")]
pub(crate) struct TimedOut;

/// `future`'s output, or `TimedOut` once `limit` has passed by a [`Limit`]:
/// `tokio::time::timeout` for waits on a master. The future is polled
/// before the limit is looked at, so an answer that is ready always wins.
///
/// # Errors
/// `TimedOut` when the limit ran out first.
pub(crate) async fn within<F: Future>(limit: Duration, future: F) -> Result<F::Output, TimedOut> {
    let mut future = std::pin::pin!(future);
    let mut limit = Limit::new(limit);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        limit.poll_passed(cx).map(|()| Err(TimedOut))
    })
    .await
}

#[cfg(test)]
#[path = "limit_tests.rs"]
mod tests;
