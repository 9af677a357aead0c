//! Prometheus metrics: one registry, made in `main` and passed down (no
//! globals, so tests see fresh counters), served as text on `/metrics` from
//! its own port. Labels are bounded: a node is its index, never a resource.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use prometheus::{Encoder, IntGaugeVec, Opts, Registry, TextEncoder};
use tokio::net::TcpListener;

use crate::redlock::health::{Check, Standing};

/// The node states, as label values.
const STATES: [&str; 4] = ["usable", "quarantined", "preflight_failed", "unverified"];

/// Every series the daemon exports.
pub struct Metrics {
    registry: Registry,
    node_state: IntGaugeVec,
    node_preflight_failed: IntGaugeVec,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    /// A fresh registry with every series registered.
    ///
    /// # Panics
    /// Never in practice: the names are static and distinct.
    pub fn new() -> Metrics {
        let registry = Registry::new();
        let node_state = IntGaugeVec::new(
            Opts::new(
                "redlock_node_state",
                "1 for the state each Redis master is in (usable, quarantined, preflight_failed, unverified)",
            ),
            &["node", "state"],
        )
        .expect("metric definition");
        let node_preflight_failed = IntGaugeVec::new(
            Opts::new(
                "redlock_node_preflight_failed",
                "1 when a master fails the named preflight check (role, maxmemory_policy, scripts) and is not used",
            ),
            &["node", "check"],
        )
        .expect("metric definition");
        registry.register(Box::new(node_state.clone())).expect("register");
        registry
            .register(Box::new(node_preflight_failed.clone()))
            .expect("register");
        Metrics {
            registry,
            node_state,
            node_preflight_failed,
        }
    }

    /// The registry, for more collectors.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Records master `node`'s standing (one-hot over the states and checks).
    pub fn node_standing(&self, node: usize, standing: &Standing) {
        let node = node.to_string();
        let current = match standing {
            Standing::Usable => "usable",
            Standing::Quarantined { .. } => "quarantined",
            Standing::Failed { .. } => "preflight_failed",
            Standing::Unverified => "unverified",
        };
        for state in STATES {
            self.node_state
                .with_label_values(&[&node, state])
                .set(i64::from(state == current));
        }
        let failed = match standing {
            Standing::Failed { check, .. } => Some(*check),
            _ => None,
        };
        for check in Check::ALL {
            let value = i64::from(failed == Some(check));
            self.node_preflight_failed
                .with_label_values(&[&node, check.as_str()])
                .set(value);
        }
    }

    /// The text exposition of every series.
    pub fn render(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        out
    }
}

/// Serves `GET /metrics` on `listener` until `shutdown` resolves.
pub async fn serve(listener: TcpListener, metrics: Arc<Metrics>, shutdown: impl Future<Output = ()>) {
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
        };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
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
