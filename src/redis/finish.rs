//! A call that runs to its end however its caller stops waiting: a
//! release's batch is never cut (docs/design.md#batching).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

/// A call that runs to its end: awaited, it is the call; dropped before
/// its end, it goes on in a task of its own (on the runtime it was dropped
/// on; without one, the runtime is shutting down and it goes with it).
pub(super) struct Finish<F: Future + Send + 'static>(Option<Pin<Box<F>>>);

impl<F: Future + Send + 'static> Finish<F> {
    pub(super) fn new(call: F) -> Finish<F> {
        Finish(Some(Box::pin(call)))
    }
}

impl<F: Future + Send + 'static> Future for Finish<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let Some(call) = self.0.as_mut() else {
            return Poll::Pending;
        };
        let output = ready!(call.as_mut().poll(cx));
        self.0 = None;
        Poll::Ready(output)
    }
}

impl<F: Future + Send + 'static> Drop for Finish<F> {
    fn drop(&mut self) {
        if let (Some(call), Ok(runtime)) = (self.0.take(), tokio::runtime::Handle::try_current()) {
            runtime.spawn(async move {
                let _ = call.await;
            });
        }
    }
}
