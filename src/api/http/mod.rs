//! HTTP/JSON on the gRPC listener (docs/http.md): an axum router served
//! beside the gRPC services by the same tonic server, so TLS, mutual TLS
//! and keepalive are the same for both. A unary route calls the very
//! `Lock`/`Admin`/`Election` trait method gRPC calls, with the headers as
//! metadata and the connection's extensions, after the same
//! `auth::Authenticate` check: validation, tenants, scopes, quotas and
//! audit are gRPC's. A `tonic::Status` becomes an HTTP status and a
//! `google.rpc.Status` body (`error`).
//!
//! The route table is `routes` and its OpenAPI document `openapi`; `json`
//! reads requests and writes replies in the proto3 JSON mapping. The stream
//! routes (`streams`) answer in NDJSON or Server-Sent Events (`lines`), and
//! `:hold` and `:campaign` drive the session machine (`held`).

pub(crate) mod error;
pub(crate) mod held;
pub(crate) mod json;
pub(crate) mod lines;
pub(crate) mod openapi;
pub(crate) mod routes;
pub(crate) mod streams;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, Method, Request, Response, StatusCode, header};
use percent_encoding::percent_decode_str;
use tonic::Status;
use tonic::service::Interceptor;

use crate::api::admin::AdminService;
use crate::api::auth::{Auth, Authenticate};
use crate::api::election::ElectionService;
use crate::api::proto::admin_server::Admin;
use crate::api::proto::election_server::Election;
use crate::api::proto::lock_server::Lock;
use crate::api::service::LockService;
use crate::redlock::Node;
use json::{MAX_BODY_BYTES, Sources};
use routes::{Found, Route};

/// The services the routes call, shared with the gRPC servers.
pub(crate) struct Http<N> {
    /// `redlockd.v1.Lock`.
    pub lock: Arc<LockService<N>>,
    /// `redlockd.v1.Admin`.
    pub admin: Arc<AdminService<N>>,
    /// `redlockd.v1.Election`.
    pub election: Arc<ElectionService<N>>,
    /// The tokens, checked as `auth::Authenticate` checks gRPC calls.
    pub auth: Arc<Auth>,
}

/// The router for everything that is not a gRPC service's path: the
/// `/v1/` routes, and a `google.rpc.Status` 404 for the rest (or gRPC's
/// own UNIMPLEMENTED for a gRPC client that asked for an unknown service).
pub(crate) fn router<N: Node>(http: Http<N>) -> Router {
    let http = Arc::new(http);
    Router::new().fallback(move |request: Request<Body>| {
        let http = http.clone();
        async move { dispatch(&http, request).await }
    })
}

/// Finds the route of `request` and answers it.
async fn dispatch<N: Node>(http: &Http<N>, request: Request<Body>) -> Response<Body> {
    if is_grpc(&request) {
        let (parts, ()) = Status::unimplemented("").into_http::<()>().into_parts();
        return Response::from_parts(parts, Body::empty());
    }
    let path = request.uri().path().to_owned();
    if path == openapi::PATH && request.method() == Method::GET {
        let mut response = Response::new(Body::from(openapi::DOCUMENT.as_slice()));
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return response;
    }
    match routes::find(&routes::ALL, request.method(), &path) {
        Found::Route(route, variable) if route.is_stream() => {
            let variable = variable.map(str::to_owned);
            (streams::stream(http, route, variable, request).await)
                .unwrap_or_else(|Reject(http_status, status)| error::with_http_status(http_status, &status))
        }
        Found::Route(route, variable) => {
            let variable = variable.map(str::to_owned);
            match unary(http, route, variable, request).await {
                Ok(body) => {
                    let mut response = Response::new(Body::from(body));
                    response
                        .headers_mut()
                        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                    response
                }
                Err(Reject(http_status, status)) => error::with_http_status(http_status, &status),
            }
        }
        Found::WrongMethod(allowed) => {
            let names: Vec<&str> = allowed.iter().map(Method::as_str).collect();
            let status = Status::unimplemented(format!(
                "{} {path}: this path takes {} only",
                request.method(),
                names.join(", ")
            ));
            let mut response = error::with_http_status(StatusCode::METHOD_NOT_ALLOWED, &status);
            if let Ok(allow) = HeaderValue::from_str(&names.join(", ")) {
                response.headers_mut().insert(header::ALLOW, allow);
            }
            response
        }
        Found::Nothing => {
            let status = Status::not_found(format!(
                "no route {} {path}: the routes are listed in docs/http.md#routes",
                request.method()
            ));
            error::with_http_status(StatusCode::NOT_FOUND, &status)
        }
    }
}

/// Whether a gRPC client sent `request`.
fn is_grpc(request: &Request<Body>) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/grpc"))
}

/// A refusal: the HTTP status (usually the gRPC code's) and the status.
struct Reject(StatusCode, Status);

impl From<Status> for Reject {
    fn from(status: Status) -> Reject {
        Reject(error::http_status(status.code()), status)
    }
}

/// Calls the unary RPC of `route` and answers its reply as JSON.
async fn unary<N: Node>(
    http: &Http<N>,
    route: &'static Route,
    variable: Option<String>,
    request: Request<Body>,
) -> Result<Vec<u8>, Reject> {
    let (parts, body) = request.into_parts();
    // The body (at most MAX_BODY_BYTES) is read first: an HTTP/2 stream
    // answered before its body is in is reset, and curl then shows a framing
    // error instead of the answer. Then, as on gRPC, authentication before
    // the message is decoded.
    let body = read_body(body).await?;
    let query = parts.uri.query().map(str::to_owned);
    json_only(route, query.as_deref(), &parts.headers)?;
    let metadata = tonic::Request::from_http(Request::from_parts(parts, ()));
    let (metadata, extensions, ()) = Authenticate(http.auth.clone()).call(metadata)?.into_parts();
    let path = match (route.parts().variable, variable) {
        (Some(field), Some(raw)) => Some((field, decode(field, &raw)?)),
        _ => None,
    };
    let sources = Sources {
        message: route.request,
        path,
        query: query.as_deref(),
        body: &body,
    };
    macro_rules! call {
        ($service:expr, $trait:ident :: $method:ident) => {{
            let message = json::request(sources)?;
            let request = tonic::Request::from_parts(metadata, extensions, message);
            let reply = $trait::$method(&*$service, request).await?;
            Ok(json::reply(reply.get_ref())?)
        }};
    }
    match route.rpc {
        "redlockd.v1.Lock/Acquire" => call!(http.lock, Lock::acquire),
        "redlockd.v1.Lock/Extend" => call!(http.lock, Lock::extend),
        "redlockd.v1.Lock/Release" => call!(http.lock, Lock::release),
        "redlockd.v1.Lock/Inspect" => call!(http.lock, Lock::inspect),
        "redlockd.v1.Lock/AcquireMany" => call!(http.lock, Lock::acquire_many),
        "redlockd.v1.Lock/ExtendMany" => call!(http.lock, Lock::extend_many),
        "redlockd.v1.Lock/ReleaseMany" => call!(http.lock, Lock::release_many),
        "redlockd.v1.Admin/ListLocks" => call!(http.admin, Admin::list_locks),
        "redlockd.v1.Admin/ForceRelease" => call!(http.admin, Admin::force_release),
        "redlockd.v1.Election/Leader" => call!(http.election, Election::leader),
        "redlockd.v1.Election/Participants" => call!(http.election, Election::participants),
        "redlockd.v1.Election/Proclaim" => call!(http.election, Election::proclaim),
        "redlockd.v1.Election/Resign" => call!(http.election, Election::resign),
        other => Err(Status::internal(format!("the route table names {other}, which has no handler")).into()),
    }
}

/// Refuses a POST with a query string, and a body that is not JSON.
fn json_only(route: &Route, query: Option<&str>, headers: &axum::http::HeaderMap) -> Result<(), Reject> {
    if route.method == routes::RouteMethod::Post && query.is_some() {
        return Err(Status::invalid_argument(format!(
            "{}: POST routes take their fields in the JSON body, not the query string",
            route.template
        ))
        .into());
    }
    // JSON only, and said so when there is a body. Not the types a browser
    // page may send to another origin without a CORS preflight (none,
    // application/x-www-form-urlencoded, multipart/form-data, text/plain):
    // a page the operator visits could otherwise take or release locks on a
    // daemon it can reach (docs/http.md#json). `curl -d` sends the form
    // type: use `curl --json`.
    let declared_empty = headers.get(header::CONTENT_LENGTH).is_some_and(|v| v == "0");
    let refused = match headers.get(header::CONTENT_TYPE) {
        None if route.method == routes::RouteMethod::Post && !declared_empty => Some("none".to_owned()),
        None => None,
        Some(content_type) => (!content_type.to_str().is_ok_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        }))
        .then(|| format!("{content_type:?}")),
    };
    if let Some(content_type) = refused {
        return Err(Reject(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Status::invalid_argument(format!(
                "content-type: {content_type}; the body must be application/json (with curl: --json, not -d)"
            )),
        ));
    }
    Ok(())
}

/// The body, at most `MAX_BODY_BYTES` (413 beyond).
async fn read_body(body: Body) -> Result<axum::body::Bytes, Reject> {
    axum::body::to_bytes(body, MAX_BODY_BYTES).await.map_err(|e| {
        let mut source: Option<&dyn std::error::Error> = Some(&e);
        while let Some(error) = source {
            if error.is::<http_body_util::LengthLimitError>() {
                return Reject(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    Status::resource_exhausted(format!("the request body is over the limit of {MAX_BODY_BYTES} bytes")),
                );
            }
            source = error.source();
        }
        Status::cancelled(format!("the request body could not be read: {e}")).into()
    })
}

/// A path variable, percent-decoded.
fn decode(field: &str, raw: &str) -> Result<String, Reject> {
    percent_decode_str(raw)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| {
            Status::invalid_argument(format!("{field}: the path's value is not UTF-8 once percent-decoded")).into()
        })
}
