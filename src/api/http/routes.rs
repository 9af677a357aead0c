//! The HTTP routes (docs/http.md#routes): one table that the dispatcher,
//! the OpenAPI document and the `google.api.http` annotations' test all
//! read, and the matcher over it.
//!
//! A path template is a fixed prefix, at most one variable that takes the
//! rest of the path (a resource name may hold `/`), and an optional
//! `:verb` (Google's custom-method syntax, as in the annotations'
//! `{resource=**}:acquire`). The verb is split off the raw path before the
//! variable is percent-decoded, so a name that itself ends in `:acquire`
//! is written with its colon as `%3A`.

use std::sync::LazyLock;

use axum::http::Method;

/// One route: an HTTP method and path template for one RPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Route {
    /// `GET` or `POST`.
    pub method: RouteMethod,
    /// The path template, e.g. `/v1/locks/{resource}:acquire`.
    pub template: &'static str,
    /// The gRPC method it calls: `redlockd.v1.Lock/Acquire`.
    pub rpc: &'static str,
    /// The request message, `redlockd.v1.AcquireRequest`.
    pub request: &'static str,
    /// The response message (of each line, for a stream).
    pub response: &'static str,
}

/// The HTTP methods the routes use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RouteMethod {
    /// Fields in the path and the query string; no body.
    Get,
    /// Fields in the path and a JSON body.
    Post,
}

impl RouteMethod {
    /// As `http` spells it.
    pub(crate) fn http(self) -> Method {
        match self {
            RouteMethod::Get => Method::GET,
            RouteMethod::Post => Method::POST,
        }
    }
}

macro_rules! route {
    ($method:ident $template:literal => $service:literal / $rpc:literal ($request:literal) -> $response:literal) => {
        Route {
            method: RouteMethod::$method,
            template: $template,
            rpc: concat!("redlockd.v1.", $service, "/", $rpc),
            request: concat!("redlockd.v1.", $request),
            response: concat!("redlockd.v1.", $response),
        }
    };
}

/// Every unary route, in the order docs/http.md lists them.
pub(crate) const UNARY: &[Route] = &[
    route!(Post "/v1/locks/{resource}:acquire" => "Lock"/"Acquire" ("AcquireRequest") -> "AcquireResponse"),
    route!(Post "/v1/locks/{resource}:extend" => "Lock"/"Extend" ("ExtendRequest") -> "ExtendResponse"),
    route!(Post "/v1/locks/{resource}:release" => "Lock"/"Release" ("ReleaseRequest") -> "ReleaseResponse"),
    route!(Get "/v1/locks/{resource}" => "Lock"/"Inspect" ("InspectRequest") -> "InspectResponse"),
    route!(Post "/v1/locks:acquireMany" => "Lock"/"AcquireMany" ("AcquireManyRequest") -> "AcquireManyResponse"),
    route!(Post "/v1/locks:extendMany" => "Lock"/"ExtendMany" ("ExtendManyRequest") -> "ExtendManyResponse"),
    route!(Post "/v1/locks:releaseMany" => "Lock"/"ReleaseMany" ("ReleaseManyRequest") -> "ReleaseManyResponse"),
    route!(Get "/v1/admin/locks" => "Admin"/"ListLocks" ("ListLocksRequest") -> "ListLocksResponse"),
    route!(Post "/v1/admin/locks/{resource}:forceRelease" => "Admin"/"ForceRelease" ("ForceReleaseRequest") -> "ForceReleaseResponse"),
    route!(Get "/v1/elections/{election}" => "Election"/"Leader" ("LeaderRequest") -> "LeaderResponse"),
    route!(Get "/v1/elections/{election}:participants" => "Election"/"Participants" ("ParticipantsRequest") -> "ParticipantsResponse"),
    route!(Post "/v1/elections/{election}:proclaim" => "Election"/"Proclaim" ("ProclaimRequest") -> "ProclaimResponse"),
    route!(Post "/v1/elections/{election}:resign" => "Election"/"Resign" ("ResignRequest") -> "ResignResponse"),
];

/// Every stream route (docs/http.md#streams): each answers a line per
/// `response` message; `request` is what the body holds (a session's
/// start, for the two that open one).
pub(crate) const STREAMS: &[Route] = &[
    route!(Post "/v1/locks/{resource}:hold" => "Lock"/"Hold" ("HoldStart") -> "HoldResponse"),
    route!(Get "/v1/locks/{resource}:watch" => "Lock"/"Watch" ("WatchRequest") -> "WatchResponse"),
    route!(Post "/v1/elections/{election}:campaign" => "Election"/"Campaign" ("CampaignStart") -> "CampaignResponse"),
    route!(Get "/v1/elections/{election}:observe" => "Election"/"Observe" ("ObserveRequest") -> "LeaderResponse"),
];

/// The unary routes, then the stream routes: what a request is matched
/// against (so that a verb of either is never taken for part of a name).
pub(crate) static ALL: LazyLock<Vec<Route>> = LazyLock::new(|| [UNARY, STREAMS].concat());

/// A template in parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Template<'a> {
    /// Everything before the variable (or before the verb, when none).
    pub prefix: &'a str,
    /// The variable's name (a field of the request), if any.
    pub variable: Option<&'a str>,
    /// The custom verb without its `:`, if any.
    pub verb: Option<&'a str>,
}

impl Route {
    /// Whether it answers a stream of lines (one of `STREAMS`).
    pub(crate) fn is_stream(&self) -> bool {
        STREAMS.contains(self)
    }

    /// The template in parts.
    pub(crate) fn parts(&self) -> Template<'static> {
        let (prefix, rest) = match self.template.split_once('{') {
            Some((prefix, rest)) => (prefix, Some(rest)),
            None => (self.template, None),
        };
        match rest {
            Some(rest) => {
                let (variable, after) = rest.split_once('}').unwrap_or((rest, ""));
                Template {
                    prefix,
                    variable: Some(variable),
                    verb: after.strip_prefix(':'),
                }
            }
            None => {
                let (prefix, verb) = match prefix.rsplit_once(':') {
                    Some((p, v)) if !v.contains('/') => (p, Some(v)),
                    _ => (prefix, None),
                };
                Template {
                    prefix,
                    variable: None,
                    verb,
                }
            }
        }
    }
}

/// What a request path and method found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found<'r, 'p> {
    /// This route, with the variable's raw (still percent-encoded) value.
    Route(&'r Route, Option<&'p str>),
    /// The path names routes, none for this method: these are allowed.
    WrongMethod(Vec<Method>),
    /// No route has this path.
    Nothing,
}

/// The route of `method` on the raw `path` among `routes`.
pub(crate) fn find<'r, 'p>(routes: &'r [Route], method: &Method, path: &'p str) -> Found<'r, 'p> {
    let mut allowed = Vec::new();
    // The most specific first: a route with a verb before one without.
    let mut best: Option<(&'r Route, Option<&'p str>)> = None;
    let verbs: Vec<&str> = routes.iter().filter_map(|r| r.parts().verb).collect();
    for route in routes {
        let Some(variable) = matches(route.parts(), path, &verbs) else {
            continue;
        };
        if route.method.http() != *method {
            allowed.push(route.method.http());
            continue;
        }
        if best.is_none_or(|(b, _)| b.parts().verb.is_none() && route.parts().verb.is_some()) {
            best = Some((route, variable));
        }
    }
    match best {
        Some((route, variable)) => Found::Route(route, variable),
        None if allowed.is_empty() => Found::Nothing,
        None => Found::WrongMethod(allowed),
    }
}

/// Whether `path` fits `template`: `Some(variable)` when it does.
/// A variable without a verb never ends in one of `verbs`.
fn matches<'p>(template: Template<'_>, path: &'p str, verbs: &[&str]) -> Option<Option<&'p str>> {
    let rest = path.strip_prefix(template.prefix)?;
    let rest = match template.verb {
        Some(verb) => rest.strip_suffix(verb)?.strip_suffix(':')?,
        None => rest,
    };
    match template.variable {
        Some(_) if rest.is_empty() => None,
        // A variable with no verb must not swallow one: `/v1/locks/x:acquire`
        // on GET is not an Inspect of "x:acquire" (write `%3A` for that).
        Some(_) if template.verb.is_none() && rest.rsplit_once(':').is_some_and(|(_, v)| verbs.contains(&v)) => None,
        Some(_) => Some(Some(rest)),
        None if rest.is_empty() => Some(None),
        None => None,
    }
}

#[cfg(test)]
#[path = "routes_tests.rs"]
mod tests;
