//! The `Pipeline` stream: many Acquire, Extend and Release calls over one
//! gRPC stream, each answered with its `id` as soon as it is done.
//!
//! A unary call costs a client and the daemon an HTTP/2 stream of their own
//! (headers, trailers, a task); a call on a pipeline is one message each way.
//! With 64 tasks of one process taking locks, that is most of what a lock
//! costs the client and a good part of what it costs the daemon (issue #7,
//! (b)). Each call runs the service's own method, so it validates, answers
//! and fails exactly as the unary call does.
//!
//! The calls in flight are futures polled by the reply stream itself (no
//! task or channel per call): when the client goes away, tonic drops the
//! stream and with it every call, as it would drop a unary handler.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::stream::{FuturesUnordered, Stream, StreamExt};
use tonic::{Status, Streaming};

use crate::auth::Caller;
use crate::error::Error;
use crate::proto::pipeline_request::Call;
use crate::proto::pipeline_response::Result as Answer;
use crate::proto::{CallError, PipelineRequest, PipelineResponse};
use crate::redlock::Node;
use crate::server::{LockService, wire_outcomes};

/// A call in flight.
pub type Pending = Pin<Box<dyn Future<Output = PipelineResponse> + Send>>;

/// The reply stream of one `Pipeline` call.
pub struct Replies {
    /// The client's calls; `None` once it half-closed or broke.
    calls: Option<Streaming<PipelineRequest>>,
    in_flight: FuturesUnordered<Pending>,
    /// At most this many calls in flight; no further call is read before one
    /// is answered.
    limit: usize,
    /// Resolves when the daemon starts shutting down; `None` once it has.
    closing: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// How the stream ends once the calls in flight are answered: `None`
    /// for a client that half-closed.
    end: Option<Status>,
    service: Arc<dyn Calls>,
    caller: Caller,
}

/// The three calls, as the service answers them (object-safe, so the
/// stream does not carry the node type).
pub trait Calls: Send + Sync + 'static {
    /// Answers one call: its reply, with its id. One box per call.
    fn call(self: Arc<Self>, caller: Caller, request: PipelineRequest) -> Pending;
}

impl<N: Node> Calls for LockService<N> {
    fn call(self: Arc<Self>, caller: Caller, request: PipelineRequest) -> Pending {
        Box::pin(async move {
            let answered = match request.call {
                Some(Call::Acquire(req)) => LockService::acquire(&self, &caller, None, req)
                    .await
                    .map(Answer::Acquire),
                Some(Call::Extend(req)) => LockService::extend(&self, &caller, req).await.map(Answer::Extend),
                Some(Call::Release(req)) => LockService::release(&self, &caller, req).await.map(Answer::Release),
                None => Err(Error::invalid("call", "one of acquire, extend or release must be set")),
            };
            PipelineResponse {
                id: request.id,
                result: Some(answered.unwrap_or_else(|error| Answer::Error(call_error(&error)))),
            }
        })
    }
}

/// An error as a Pipeline reply: the code and message of the unary status,
/// and what each master said.
pub fn call_error(error: &Error) -> CallError {
    let (nodes, needed) = match error {
        Error::Unavailable { votes, needed, .. } if !votes.is_empty() => (wire_outcomes(votes), *needed as u32),
        _ => (Vec::new(), 0),
    };
    CallError {
        code: error.code() as i32,
        message: error.to_string(),
        nodes,
        needed,
    }
}

impl Replies {
    /// The replies to `calls` from `caller`, answered by `service`, with at
    /// most `limit` in flight; `closing` resolves when the daemon shuts down.
    pub fn new(
        service: Arc<dyn Calls>,
        caller: Caller,
        calls: Streaming<PipelineRequest>,
        limit: usize,
        closing: impl Future<Output = ()> + Send + 'static,
    ) -> Replies {
        Replies {
            calls: Some(calls),
            in_flight: FuturesUnordered::new(),
            limit: limit.max(1),
            closing: Some(Box::pin(closing)),
            end: None,
            service,
            caller,
        }
    }

    fn start(&mut self, request: PipelineRequest) {
        let call = Arc::clone(&self.service).call(self.caller.clone(), request);
        self.in_flight.push(call);
    }
}

impl Stream for Replies {
    type Item = Result<PipelineResponse, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        // Shutting down: read no further call.
        if let Some(closing) = &mut this.closing
            && closing.as_mut().poll(cx).is_ready()
        {
            this.closing = None;
            if this.calls.take().is_some() {
                this.end = Some(Error::ShuttingDown.into());
            }
        }
        // Read calls while there is room: each starts at once.
        while this.in_flight.len() < this.limit {
            let Some(calls) = &mut this.calls else { break };
            match calls.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(request))) => this.start(request),
                Poll::Ready(Some(Err(status))) => {
                    this.calls = None;
                    this.end = Some(status);
                }
                Poll::Ready(None) => this.calls = None,
                Poll::Pending => break,
            }
        }
        match this.in_flight.poll_next_unpin(cx) {
            // tonic polls again at once: the room it made is filled then.
            Poll::Ready(Some(reply)) => Poll::Ready(Some(Ok(reply))),
            Poll::Ready(None) if this.calls.is_none() => Poll::Ready(this.end.take().map(Err)),
            Poll::Ready(None) | Poll::Pending => Poll::Pending,
        }
    }
}
