//! One round's fan-out: every node asked at once, answers gathered until
//! the outcome is known or the per-node limit passes.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use super::limit::Limit;

/// Runs `calls` at once and collects their answers in order until
/// `settled` says the outcome is known, all have answered, or `limit` has
/// passed; the answers not awaited are `None`, and the flag says whether
/// the limit had passed when the wait ended. Every call is polled from the start (so its
/// command is sent) before any answer is looked at.
///
/// One timer bounds every call of the round, started once all of them were
/// polled, so each still gets at least `limit`. A timer per call cost the
/// daemon a wake-up of its own runtime for each (tokio unparks its driver,
/// an `eventfd` write, whenever a timer is set earlier than the one it
/// sleeps for): ~9 system calls per (a) cycle (docs/performance.md). The
/// limit counts the time the daemon could run (`Limit`,
/// docs/design.md#late-timers): a timer that fires late because the daemon
/// was descheduled gives the answers that came meanwhile time to arrive.
pub(super) async fn gather<T, F: Future<Output = T>>(
    calls: impl IntoIterator<Item = F>,
    settled: impl Fn(&[Option<T>]) -> bool,
    limit: Duration,
) -> (Vec<Option<T>>, bool) {
    let mut calls: Vec<Pin<Box<F>>> = calls.into_iter().map(Box::pin).collect();
    let mut answers: Vec<Option<T>> = (0..calls.len()).map(|_| None).collect();
    let mut timer: Option<Limit> = None;
    let timed_out = std::future::poll_fn(|cx| {
        for (call, answer) in calls.iter_mut().zip(answers.iter_mut()) {
            if answer.is_none()
                && let Poll::Ready(value) = call.as_mut().poll(cx)
            {
                *answer = Some(value);
            }
        }
        if answers.iter().all(Option::is_some) || settled(&answers) {
            // Decided in the poll in which the limit passed (on time): the
            // calls it leaves out timed out (as their metrics say), not
            // "not awaited".
            return Poll::Ready(timer.as_mut().is_some_and(|t| t.poll_passed(cx).is_ready()));
        }
        let timer = timer.get_or_insert_with(|| Limit::new(limit));
        timer.poll_passed(cx).map(|()| true)
    })
    .await;
    (answers, timed_out)
}
