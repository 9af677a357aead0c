//! The `Pipeline` stream: many Acquire, Extend and Release calls over one
//! gRPC stream, each answered with its `id` as soon as it is done.
//!
//! A unary call costs a client and the daemon an HTTP/2 stream of their own
//! (headers, trailers, a task); a call on a pipeline is one message each way.
//! With 64 tasks of one process taking locks, that is most of what a lock
//! costs the client and a good part of what it costs the daemon (docs/performance.md,
//! workload (b)). Each call runs the service's own method, so it validates, answers
//! and fails exactly as the unary call does.
//!
//! One task per stream (not per call) runs the calls in flight, so they go
//! on whether or not the client reads its replies: a call that stopped
//! half-way could keep a master's batch slot, and with it every other
//! client's requests to that master, waiting. Each call holds a slot of the
//! reply queue from the moment it is read, so a finished call never waits to
//! queue its reply, and a client that reads nothing gets no further call
//! read (HTTP/2 flow control then holds it back). When the client goes
//! away, the task drops its calls, as tonic drops a unary handler.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::stream::{FuturesUnordered, StreamExt};
use tokio::sync::mpsc::{self, OwnedPermit};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Status, Streaming};
use tracing::Instrument;

use crate::api::auth::Caller;
use crate::api::error::Error;
use crate::api::proto::pipeline_request::Call;
use crate::api::proto::{CallError, PipelineRequest, PipelineResponse};
use crate::api::status;
use crate::api::wire::wire_outcomes;
use crate::locks;
use crate::redlock;
use crate::telemetry::traces;

/// A slot of a stream's reply queue.
pub(crate) type ReplyPermit = OwnedPermit<Result<PipelineResponse, Status>>;

/// A call in flight, with the reply slot it holds.
pub(crate) type Answered = Pin<Box<dyn Future<Output = (ReplyPermit, PipelineResponse)> + Send>>;

/// The reply stream of one `Pipeline` call: what the stream's task queued.
pub(crate) type PipelineReplies = ReceiverStream<Result<PipelineResponse, Status>>;

/// The three calls, as the service answers them (object-safe, so the
/// stream does not carry the node type).
pub(crate) trait Calls: Send + Sync + 'static {
    /// Answers one call: its reply, with its id, and the reply slot it
    /// holds. One box per call.
    fn call(self: Arc<Self>, caller: Caller, request: PipelineRequest, slot: ReplyPermit) -> Answered;
}

/// An error as a Pipeline reply: the code and message of the unary status,
/// and what each master said.
pub(crate) fn call_error(error: &Error) -> CallError {
    let (nodes, needed) = match error {
        Error::Locks(locks::error::Error::Engine(redlock::Error::Unavailable { votes, needed, .. }))
            if !votes.is_empty() =>
        {
            (wire_outcomes(votes), *needed as u32)
        }
        _ => (Vec::new(), 0),
    };
    CallError {
        code: status::code(error) as i32,
        message: error.to_string(),
        nodes,
        needed,
    }
}

/// Starts the task that answers `calls` from `caller` with `service`, at
/// most `limit` calls in flight and replies waiting together; `closing`
/// resolves when the daemon shuts down. Returns the replies.
pub(crate) fn serve(
    service: Arc<dyn Calls>,
    caller: Caller,
    calls: Streaming<PipelineRequest>,
    limit: usize,
    closing: impl Future<Output = ()> + Send + 'static,
) -> PipelineReplies {
    let (replies, queued) = mpsc::channel(limit.max(1));
    // Each call's span is a child of the stream's (docs/tracing.md#spans).
    let stream = traces::current_call();
    tokio::spawn(run(service, caller, calls, replies, closing, stream));
    ReceiverStream::new(queued)
}

async fn run(
    service: Arc<dyn Calls>,
    caller: Caller,
    mut calls: Streaming<PipelineRequest>,
    replies: mpsc::Sender<Result<PipelineResponse, Status>>,
    closing: impl Future<Output = ()> + Send,
    stream: tracing::Span,
) {
    let mut closing = std::pin::pin!(closing);
    let mut in_flight: FuturesUnordered<Answered> = FuturesUnordered::new();
    // A reply slot, taken before the next call is read.
    let mut slot: Option<ReplyPermit> = None;
    let mut reading = true;
    // How the stream ends after the calls in flight: `None` for a client
    // that half-closed.
    let mut end: Option<Status> = None;
    while reading || !in_flight.is_empty() {
        tokio::select! {
            biased;
            // The client left: its calls stop here.
            () = replies.closed() => return,
            () = &mut closing, if reading => {
                reading = false;
                end = Some(locks::error::Error::ShuttingDown.into());
            }
            Some((taken, reply)) = in_flight.next(), if !in_flight.is_empty() => {
                taken.send(Ok(reply));
            }
            taken = replies.clone().reserve_owned(), if reading && slot.is_none() => match taken {
                Ok(taken) => slot = Some(taken),
                Err(_) => return,
            },
            next = calls.next(), if reading && slot.is_some() => match next {
                // Always a slot: a call is read only with one.
                Some(Ok(request)) => if let Some(taken) = slot.take() {
                    let method = (!stream.is_disabled()).then(|| method_of(&request));
                    let call = Arc::clone(&service).call(caller.clone(), request, taken);
                    in_flight.push(match method {
                        None => call,
                        Some(method) => Box::pin(call.instrument(traces::carried_span(&stream, method))),
                    });
                },
                Some(Err(status)) => {
                    reading = false;
                    end = Some(status);
                }
                None => reading = false,
            },
        }
    }
    drop(slot);
    if let Some(status) = end {
        let _ = replies.send(Err(status)).await;
    }
}

/// A carried call's span name.
fn method_of(request: &PipelineRequest) -> &'static str {
    match request.call {
        Some(Call::Acquire(_)) => "/redlockd.v1.Lock/Pipeline/Acquire",
        Some(Call::Extend(_)) => "/redlockd.v1.Lock/Pipeline/Extend",
        Some(Call::Release(_)) => "/redlockd.v1.Lock/Pipeline/Release",
        Some(Call::AcquireMany(_)) => "/redlockd.v1.Lock/Pipeline/AcquireMany",
        Some(Call::ExtendMany(_)) => "/redlockd.v1.Lock/Pipeline/ExtendMany",
        Some(Call::ReleaseMany(_)) => "/redlockd.v1.Lock/Pipeline/ReleaseMany",
        None => "/redlockd.v1.Lock/Pipeline/(none)",
    }
}
