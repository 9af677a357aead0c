//! The stream routes (docs/http.md#streams): `:hold` and `:campaign` run a
//! session (`held`), `:watch` and `:observe` are gRPC's `Watch` and
//! `Observe` streams, called as gRPC calls them; each answers a stream of
//! lines (`lines`). What can be refused before the first line (the token,
//! a scope, a field, the session quota) is an HTTP error as a unary
//! route's; what happens later is an `error` line.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, Response};
use tonic::Status;
use tonic::service::Interceptor;

use super::json::{self, Sources};
use super::lines::{self, Framing};
use super::routes::Route;
use super::{Http, Reject, decode, held, json_only, read_body};
use crate::api::auth::Authenticate;
use crate::api::proto::election_server::Election;
use crate::api::proto::lock_server::Lock;
use crate::api::proto::{CampaignStart, HoldStart, ObserveRequest, WatchRequest};
use crate::api::service::caller_of;
use crate::redlock::Node;

/// A stream that sent nothing for this long sends a heartbeat: the HTML
/// standard's advice for Server-Sent Events through proxies that drop a
/// quiet connection (docs/http.md#streams).
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(15);

/// Calls the stream of `route` and answers its lines.
pub(super) async fn stream<N: Node>(
    http: &Http<N>,
    route: &'static Route,
    variable: Option<String>,
    request: Request<Body>,
) -> Result<Response<Body>, Reject> {
    let framing = Framing::of(request.headers());
    let (parts, body) = request.into_parts();
    let query = parts.uri.query().map(str::to_owned);
    json_only(route, query.as_deref(), &parts.headers)?;
    // Authenticated before the body is read, as gRPC's interceptor runs
    // before the first message is decoded.
    let metadata = tonic::Request::from_http(Request::from_parts(parts, ()));
    let (metadata, extensions, ()) = Authenticate(http.auth.clone()).call(metadata)?.into_parts();
    let body = read_body(body).await?;
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
    let response = match route.rpc {
        "redlockd.v1.Lock/Hold" => {
            let start: HoldStart = json::request(sources)?;
            let request = tonic::Request::from_parts(metadata, extensions, ());
            let caller = caller_of(&request)?;
            let events = held::hold(&http.lock.locks, &http.lock.limits, &caller, start)?;
            lines::respond(events, framing, HEARTBEAT)
        }
        // The election service's locks and limits are the lock service's
        // (app/mod.rs builds both from the same).
        "redlockd.v1.Election/Campaign" => {
            let start: CampaignStart = json::request(sources)?;
            let request = tonic::Request::from_parts(metadata, extensions, ());
            let caller = caller_of(&request)?;
            let events = held::campaign(&http.lock.locks, &http.lock.limits, &caller, start)?;
            lines::respond(events, framing, HEARTBEAT)
        }
        "redlockd.v1.Lock/Watch" => {
            let message: WatchRequest = json::request(sources)?;
            let request = tonic::Request::from_parts(metadata, extensions, message);
            let changes = Lock::watch(&*http.lock, request).await?.into_inner();
            lines::respond(changes, framing, HEARTBEAT)
        }
        "redlockd.v1.Election/Observe" => {
            let message: ObserveRequest = json::request(sources)?;
            let request = tonic::Request::from_parts(metadata, extensions, message);
            let leaders = Election::observe(&*http.election, request).await?.into_inner();
            lines::respond(leaders, framing, HEARTBEAT)
        }
        other => {
            return Err(Status::internal(format!("the route table names {other}, which has no handler")).into());
        }
    };
    Ok(response)
}
