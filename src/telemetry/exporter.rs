//! The `/metrics` HTTP endpoint (Prometheus text format) on its own port.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use prometheus::{Encoder, TextEncoder};
use tokio::net::TcpListener;

use crate::telemetry::metrics::Metrics;

/// Serves `GET /metrics` on `listener` until `shutdown` resolves; `refresh`
/// runs before each scrape.
pub(crate) async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    refresh: impl Fn() + Send + Sync + 'static,
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
        let (metrics, refresh) = (metrics.clone(), refresh.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                // Gauges of live state (waiters, sessions) are read at scrape time.
                refresh();
                let metrics = metrics.clone();
                async move { Ok::<_, Infallible>(respond(&metrics, &req)) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn respond(metrics: &Metrics, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let (status, content_type, body) = if req.uri().path() == "/metrics" {
        (
            StatusCode::OK,
            TextEncoder::new().format_type().to_owned(),
            metrics.render(),
        )
    } else {
        (
            StatusCode::NOT_FOUND,
            "text/plain".to_owned(),
            b"try /metrics\n".to_vec(),
        )
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response.headers_mut().insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}
