//! A gRPC server stream as an HTTP response (docs/http.md#streams): each
//! message a line of NDJSON (`application/x-ndjson`), or a Server-Sent
//! Event when the client accepts `text/event-stream`, and a heartbeat
//! when nothing was sent for a while, so that proxies keep the connection
//! and the client can tell a quiet stream from a dead one.
//!
//! NDJSON lines are wrapped as grpc-gateway wraps a server stream:
//! `{"result":{...}}` per message, `{"error":{...}}` (a `google.rpc.Status`)
//! as the last line when the stream ends with an error, and
//! `{"heartbeat":{}}`. As events: `event: result` / `event: error` with the
//! same JSON as `data`, and the heartbeat a comment line (`: heartbeat`),
//! which the HTML standard suggests for proxies and `EventSource` ignores.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use futures::{Stream, StreamExt};
use serde::Serialize;
use tokio::time::{Instant, Sleep, sleep};
use tonic::Status;

use super::error;

/// How a stream is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// One JSON object per line.
    Ndjson,
    /// Server-Sent Events.
    Sse,
}

impl Framing {
    /// Server-Sent Events when `Accept` names `text/event-stream`, NDJSON
    /// otherwise.
    pub(crate) fn of(headers: &HeaderMap) -> Framing {
        let wants_events = headers.get_all(header::ACCEPT).iter().any(|accept| {
            accept.to_str().is_ok_and(|accept| {
                accept.split(',').any(|range| {
                    range
                        .split(';')
                        .next()
                        .is_some_and(|t| t.trim().eq_ignore_ascii_case("text/event-stream"))
                })
            })
        });
        if wants_events { Framing::Sse } else { Framing::Ndjson }
    }

    fn content_type(self) -> &'static str {
        match self {
            Framing::Ndjson => "application/x-ndjson",
            Framing::Sse => "text/event-stream",
        }
    }

    /// One message, or the stream's closing error (`kind` "result" or
    /// "error"); `json` is compact, so it holds no line break.
    fn frame(self, kind: &str, json: &[u8]) -> Bytes {
        let mut line = Vec::with_capacity(json.len() + 24);
        match self {
            Framing::Ndjson => {
                line.extend_from_slice(b"{\"");
                line.extend_from_slice(kind.as_bytes());
                line.extend_from_slice(b"\":");
                line.extend_from_slice(json);
                line.extend_from_slice(b"}\n");
            }
            Framing::Sse => {
                line.extend_from_slice(b"event: ");
                line.extend_from_slice(kind.as_bytes());
                line.extend_from_slice(b"\ndata: ");
                line.extend_from_slice(json);
                line.extend_from_slice(b"\n\n");
            }
        }
        Bytes::from(line)
    }

    fn heartbeat(self) -> Bytes {
        Bytes::from_static(match self {
            Framing::Ndjson => b"{\"heartbeat\":{}}\n",
            Framing::Sse => b": heartbeat\n\n",
        })
    }
}

/// `stream`'s messages as a `200 OK` response framed as `framing`, with a
/// heartbeat after each `heartbeat` of silence. Dropping the response (the
/// client left) drops `stream`.
pub(crate) fn respond<M, S>(stream: S, framing: Framing, heartbeat: Duration) -> Response
where
    M: Serialize,
    S: Stream<Item = Result<M, Status>> + Send + Unpin + 'static,
{
    let lines = Lines {
        inner: Some(stream),
        framing,
        period: heartbeat,
        quiet: Box::pin(sleep(heartbeat)),
    };
    let mut response = Response::new(Body::from_stream(lines));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(framing.content_type()));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // nginx would otherwise buffer the stream and hold the events back.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The stream of a response body: lines, heartbeats, then the end.
struct Lines<S> {
    /// `None` once the stream ended with an error.
    inner: Option<S>,
    framing: Framing,
    period: Duration,
    /// Fires after `period` without a line.
    quiet: Pin<Box<Sleep>>,
}

impl<S> Lines<S> {
    /// The line that ends the stream with `status`.
    fn last(&mut self, status: &Status) -> Bytes {
        self.inner = None;
        let json = serde_json::to_vec(&error::body(status)).unwrap_or_default();
        self.framing.frame("error", &json)
    }

    fn sent(&mut self) {
        self.quiet.as_mut().reset(Instant::now() + self.period);
    }
}

impl<M, S> Stream for Lines<S>
where
    M: Serialize,
    S: Stream<Item = Result<M, Status>> + Unpin,
{
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let line = match inner.poll_next_unpin(cx) {
            Poll::Ready(Some(Ok(message))) => match serde_json::to_vec(&message) {
                Ok(json) => this.framing.frame("result", &json),
                Err(error) => this.last(&Status::internal(format!("a message has no JSON form: {error}"))),
            },
            // A gRPC stream ends with its error.
            Poll::Ready(Some(Err(status))) => this.last(&status),
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {
                if this.quiet.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.framing.heartbeat()
            }
        };
        this.sent();
        Poll::Ready(Some(Ok(line)))
    }
}

#[cfg(test)]
#[path = "lines_tests.rs"]
mod tests;
