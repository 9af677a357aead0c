//! The read-only status page (docs/operations.md#status-page), served on
//! the metrics listener beside `/metrics` when `status_page.enabled`: one
//! HTML page with its script and style sheet embedded in the binary
//! (`assets/`; no CDN, nothing fetched at build time), and the JSON and
//! Server-Sent Events it reads, all `GET`:
//!
//! - `/status/api/masters`, `/status/api/locks?prefix=…&page_token=…`,
//!   `/status/api/elections?prefix=…` (`views`), `/status/api/rates`
//!   (`rates`: counts per ten seconds);
//! - `/status/api/watch?resource=…` and `/status/api/observe?election=…`:
//!   `Lock/Watch` and `Election/Observe` as Server-Sent Events
//!   (docs/design.md#observe-and-watch), framed as the HTTP routes frame
//!   them (`http::lines`).
//!
//! The data needs the bearer token of a tenant with the `admin` scope when
//! tenants are configured, as the `Admin` service does, and sees that
//! tenant's namespace only; without tenants the configuration allows the
//! page only on a loopback `metrics.listen`. Nothing here writes: force
//! release stays in `redlockctl`, with its audit.

mod rates;
mod views;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use tonic::Status;
use tonic::metadata::MetadataMap;

use crate::api::auth::{Auth, Caller, scoped, scoped_election};
use crate::api::election::observed;
use crate::api::error::Error;
use crate::api::http::error::with_http_status;
use crate::api::http::lines::{self, Framing};
use crate::api::http::streams::HEARTBEAT;
use crate::api::page_token::PageTokens;
use crate::api::request;
use crate::api::watch::watch;
use crate::locks::Locks;
use crate::redlock::Engine;
use crate::redlock::node::Probed;
use crate::telemetry::exporter::{self, Pages};
use crate::telemetry::metrics::Metrics;
use rates::Rates;

const INDEX_HTML: &str = include_str!("assets/index.html");
const PAGE_JS: &str = include_str!("assets/page.js");
const PAGE_CSS: &str = include_str!("assets/page.css");

/// What the page reads.
struct StatusPage<N> {
    engine: Arc<Engine<N>>,
    locks: Arc<Locks<N>>,
    auth: Arc<Auth>,
    tokens: PageTokens,
    rates: Arc<Rates>,
}

/// The page's handler for the metrics listener (`exporter::serve`); it
/// starts reading the counters for the plots, until it is dropped.
pub(crate) fn pages<N: Probed>(
    engine: Arc<Engine<N>>,
    locks: Arc<Locks<N>>,
    auth: Arc<Auth>,
    metrics: Arc<Metrics>,
) -> Pages {
    let page = Arc::new(StatusPage {
        engine,
        locks,
        auth,
        tokens: PageTokens::new(),
        rates: Rates::start(metrics),
    });
    Arc::new(move |request: Request<exporter::Body>| {
        let page = page.clone();
        Box::pin(async move {
            let response = page.answer(request).await;
            response.map(|body| body.map_err(Into::into).boxed_unsync())
        })
    })
}

impl<N: Probed> StatusPage<N> {
    async fn answer(&self, request: Request<exporter::Body>) -> Response<Body> {
        let path = request.uri().path();
        if request.method() != Method::GET {
            let status = Status::unimplemented(format!("{} {path}: the status page takes GET only", request.method()));
            let mut response = with_http_status(StatusCode::METHOD_NOT_ALLOWED, &status);
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET"));
            return response;
        }
        let asset = match path {
            "/status" | "/status/" => Some((INDEX_HTML, "text/html; charset=utf-8")),
            "/status/page.js" => Some((PAGE_JS, "text/javascript; charset=utf-8")),
            "/status/page.css" => Some((PAGE_CSS, "text/css; charset=utf-8")),
            _ => None,
        };
        if let Some((text, content_type)) = asset {
            return respond(Body::from(text), content_type);
        }
        let Some(api) = path.strip_prefix("/status/api/") else {
            let status = Status::not_found(format!(
                "no page {path}: try /metrics, or /status when status_page.enabled"
            ));
            return with_http_status(StatusCode::NOT_FOUND, &status);
        };
        let query = Query(
            form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes())
                .into_owned()
                .collect(),
        );
        let answered = match self.caller(request.headers()) {
            Ok(caller) => self.api(api, &caller, &query).await,
            Err(status) => Err(status),
        };
        match answered {
            Ok(response) => response,
            Err(status) => with_http_status(crate::api::http::error::http_status(status.code()), &status),
        }
    }

    /// The caller of a data request: with tenants, one with the `admin`
    /// scope (docs/operations.md#admin).
    fn caller(&self, headers: &HeaderMap) -> Result<Caller, Status> {
        let caller = self.auth.caller(&MetadataMap::from_headers(headers.clone()))?;
        if self.auth.is_on() && !caller.is_admin() {
            return Err(Error::PermissionDenied(format!(
                "tenant {:?} lacks the \"admin\" scope the status page needs (scopes = [\"admin\"] in the tenants file)",
                caller.tenant().unwrap_or_default()
            ))
            .into());
        }
        Ok(caller)
    }

    async fn api(&self, api: &str, caller: &Caller, query: &Query) -> Result<Response<Body>, Status> {
        let (locks, tokens) = (&self.locks, &self.tokens);
        let field = |name| query.get(name);
        let json: Value = match api {
            "masters" => views::masters(&self.engine),
            "rates" => self.rates.view(),
            "locks" => views::locks(locks, tokens, caller, field("prefix"), field("page_token")).await?,
            "elections" => views::elections(locks, tokens, caller, field("prefix"), field("page_token")).await?,
            // Followed in the caller's namespace, as listed there.
            "watch" => {
                let resource = field("resource");
                request::resource(resource)?;
                let changes = watch(locks, &scoped(caller.tenant(), resource));
                return Ok(no_store(lines::respond(changes, Framing::Sse, HEARTBEAT)));
            }
            "observe" => {
                let election = field("election");
                request::election(election)?;
                let leaders = observed(locks, &scoped_election(caller.tenant(), election));
                return Ok(no_store(lines::respond(leaders, Framing::Sse, HEARTBEAT)));
            }
            other => return Err(Status::not_found(format!("no status page API {other:?}"))),
        };
        let body = serde_json::to_vec(&json).map_err(|e| Status::internal(e.to_string()))?;
        Ok(no_store(respond(Body::from(body), "application/json")))
    }
}

/// A query string's fields.
struct Query(Vec<(String, String)>);

impl Query {
    /// The first value of `name`, or "".
    fn get(&self, name: &str) -> &str {
        (self.0.iter())
            .find(|(key, _)| key == name)
            .map_or("", |(_, value)| value.as_str())
    }
}

/// `body` as `content_type`, with the headers every answer carries: the
/// page runs only its own script and style, and is framed by nobody.
fn respond(body: Body, content_type: &'static str) -> Response<Body> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"),
    );
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// Live data is never cached.
fn no_store(mut response: Response<Body>) -> Response<Body> {
    (response.headers_mut()).insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
