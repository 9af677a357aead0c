//! The `/metrics` HTTP endpoint (Prometheus text format) on its own port,
//! and beside it, when the daemon has one, another set of pages (the status
//! page, docs/operations.md#status-page): every other path goes to them.
//! They are handed in as a function of requests and responses, so this
//! leaf layer knows nothing of what they show.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use prometheus::{Encoder, TextEncoder};
use tokio::net::TcpListener;

use crate::telemetry::metrics::Metrics;

/// A request's or a response's body on this listener.
pub(crate) type Body = UnsyncBoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// Pages served beside `/metrics`: every request for another path.
pub(crate) type Pages =
    Arc<dyn Fn(Request<Body>) -> Pin<Box<dyn Future<Output = Response<Body>> + Send>> + Send + Sync>;

/// Serves `GET /metrics` on `listener` until `shutdown` resolves; `refresh`
/// runs before each scrape. Other paths go to `pages`, or answer 404.
pub(crate) async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    refresh: impl Fn() + Send + Sync + 'static,
    pages: Option<Pages>,
    shutdown: impl Future<Output = ()>,
) {
    let refresh = Arc::new(refresh);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
        };
        let (metrics, refresh, pages) = (metrics.clone(), refresh.clone(), pages.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let (metrics, refresh, pages) = (metrics.clone(), refresh.clone(), pages.clone());
                async move {
                    if req.uri().path() == "/metrics" {
                        // Gauges of live state (waiters, sessions) are read at scrape time.
                        refresh();
                        return Ok::<_, Infallible>(respond(&metrics));
                    }
                    Ok(match pages {
                        Some(pages) => pages(req.map(|body| body.map_err(Into::into).boxed_unsync())).await,
                        None => full(StatusCode::NOT_FOUND, "text/plain", b"try /metrics\n".to_vec()),
                    })
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn respond(metrics: &Metrics) -> Response<Body> {
    full(StatusCode::OK, TextEncoder::new().format_type(), metrics.render())
}

fn full(status: StatusCode, content_type: &str, body: Vec<u8>) -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response.headers_mut().insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}
