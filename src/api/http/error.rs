//! A gRPC status as an HTTP response (docs/http.md#errors): the standard
//! gRPC → HTTP status mapping (google.rpc.Code's, as grpc-gateway and
//! Envoy's transcoder use it) and a `google.rpc.Status` JSON body with the
//! same details as on gRPC (`ErrorInfo`, `QuotaFailure`, ...).

use axum::body::Body;
use axum::http::{HeaderValue, Response, StatusCode, header};
use serde_json::{Map, Value, json};
use tonic::{Code, Status};
use tonic_types::StatusExt;

/// The HTTP status for a gRPC code.
pub(crate) fn http_status(code: Code) -> StatusCode {
    match code {
        Code::Ok => StatusCode::OK,
        // nginx's "client closed request": the client cancelled.
        Code::Cancelled => StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST),
        Code::Unknown | Code::Internal | Code::DataLoss => StatusCode::INTERNAL_SERVER_ERROR,
        Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => StatusCode::BAD_REQUEST,
        Code::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
        Code::NotFound => StatusCode::NOT_FOUND,
        Code::AlreadyExists | Code::Aborted => StatusCode::CONFLICT,
        Code::PermissionDenied => StatusCode::FORBIDDEN,
        Code::Unauthenticated => StatusCode::UNAUTHORIZED,
        Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
        Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// `status` as a response with HTTP status `http`: usually
/// `http_status(status.code())`, but 413, 404, 405, 415 say more.
pub(crate) fn with_http_status(http: StatusCode, status: &Status) -> Response<Body> {
    let body = serde_json::to_vec(&body(status)).unwrap_or_default();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = http;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if status.code() == Code::Unauthenticated {
        // RFC 6750: the scheme the daemon expects.
        headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// The `google.rpc.Status` JSON of `status`.
pub(crate) fn body(status: &Status) -> Value {
    json!({
        "code": i32::from(status.code()),
        "message": status.message(),
        "details": details(status),
    })
}

/// The status's details, each with its `@type`, as the proto3 JSON mapping
/// writes a `google.protobuf.Any`.
fn details(status: &Status) -> Vec<Value> {
    let details = status.get_error_details();
    let mut out = Vec::new();
    if let Some(info) = details.error_info() {
        out.push(json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": info.reason,
            "domain": info.domain,
            "metadata": info.metadata.iter().map(|(k, v)| (k.clone(), Value::from(v.clone()))).collect::<Map<_, _>>(),
        }));
    }
    if let Some(quota) = details.quota_failure() {
        let violations: Vec<Value> = quota
            .violations
            .iter()
            .map(|v| {
                json!({
                    "subject": v.subject,
                    "description": v.description,
                    "quotaMetric": v.quota_metric,
                    "quotaId": v.quota_id,
                })
            })
            .collect();
        out.push(json!({
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": violations,
        }));
    }
    if let Some(bad) = details.bad_request() {
        let violations: Vec<Value> = bad
            .field_violations
            .iter()
            .map(|v| json!({ "field": v.field, "description": v.description }))
            .collect();
        out.push(json!({
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": violations,
        }));
    }
    if let Some(retry) = details.retry_info()
        && let Some(delay) = retry.retry_delay
    {
        out.push(json!({
            "@type": "type.googleapis.com/google.rpc.RetryInfo",
            "retryDelay": format!("{}s", delay.as_secs_f64()),
        }));
    }
    out
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
