//! The span of each call (docs/tracing.md#spans): a tower layer around
//! every service of the server, gRPC and HTTP alike. The span is made only
//! when traces are exported, and not for health checks or reflection; the
//! caller's W3C `traceparent` header (gRPC metadata is a header too) makes
//! it a child of the caller's span. The locks record what the call did on
//! it; this layer records the status it was answered with.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tonic::codegen::http;
use tracing::Span;

use crate::telemetry::traces;

/// Paths of calls that are never traced: probes and tooling.
const UNTRACED: [&str; 3] = [
    "/grpc.health.v1.Health/",
    "/grpc.reflection.v1.ServerReflection/",
    "/grpc.reflection.v1alpha.ServerReflection/",
];

/// The layer (`Server::layer`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TraceCalls;

impl<S> tower::Layer<S> for TraceCalls {
    type Service = Traced<S>;

    fn layer(&self, inner: S) -> Traced<S> {
        Traced(inner)
    }
}

/// A service whose calls run in their span.
#[derive(Debug, Clone)]
pub(crate) struct Traced<S>(S);

impl<S, B, R> tower::Service<http::Request<B>> for Traced<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = TracedCall<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> TracedCall<S::Future> {
        let span = if traces::exporting() {
            let path = request.uri().path();
            if UNTRACED.iter().any(|prefix| path.starts_with(prefix)) {
                Span::none()
            } else {
                let headers = request.headers();
                traces::call_span(&route_of(path), |name| headers.get(name)?.to_str().ok())
            }
        } else {
            Span::none()
        };
        let call = {
            let _entered = span.enter();
            self.0.call(request)
        };
        TracedCall { call, span }
    }
}

/// What a call's span is named: a gRPC call's path as it is; an HTTP
/// route's with the resource or election name as a parameter, so that
/// names stay few (`/v1/locks/{resource}:acquire`, docs/tracing.md#spans).
fn route_of(path: &str) -> std::borrow::Cow<'_, str> {
    let Some(rest) = path.strip_prefix("/v1/") else {
        return path.into();
    };
    let (collection, param) = match rest.split_once('/') {
        Some(("locks", name)) if !name.is_empty() => ("locks", "{resource}"),
        Some(("elections", name)) if !name.is_empty() => ("elections", "{name}"),
        _ => return path.into(),
    };
    // A resource may hold colons itself: the verb follows the last one.
    let verb = path
        .rsplit_once(':')
        .map(|(_, verb)| verb)
        .filter(|verb| !verb.is_empty() && verb.bytes().all(|b| b.is_ascii_alphabetic()));
    match verb {
        Some(verb) => format!("/v1/{collection}/{param}:{verb}").into(),
        None => format!("/v1/{collection}/{param}").into(),
    }
}

pin_project_lite::pin_project! {
    /// A call polled within its span; the status goes on the span at the end.
    pub(crate) struct TracedCall<F> {
        #[pin]
        call: F,
        span: Span,
    }
}

impl<F, R, E> Future for TracedCall<F>
where
    F: Future<Output = Result<http::Response<R>, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _entered = this.span.enter();
        let answered = this.call.poll(cx);
        if let Poll::Ready(Ok(response)) = &answered
            && !this.span.is_disabled()
        {
            record_status(this.span, response);
        }
        answered
    }
}

/// The HTTP status, and the gRPC status when the reply carries it in its
/// headers (a call refused before any message); an error marks the span.
fn record_status<R>(span: &Span, response: &http::Response<R>) {
    let status = response.status().as_u16();
    span.record("http.response.status_code", status);
    let grpc = (response.headers().get("grpc-status")).and_then(|code| code.to_str().ok()?.parse::<u16>().ok());
    if let Some(code) = grpc {
        span.record("rpc.grpc.status_code", code);
    }
    // As OpenTelemetry's conventions for a server: UNKNOWN, DEADLINE_EXCEEDED,
    // UNIMPLEMENTED, INTERNAL, UNAVAILABLE and DATA_LOSS are the server's errors.
    if status >= 500 || grpc.is_some_and(|code| matches!(code, 2 | 4 | 12 | 13 | 14 | 15)) {
        span.record("otel.status_code", "ERROR");
    }
}

#[cfg(test)]
#[path = "traced_tests.rs"]
mod tests;
