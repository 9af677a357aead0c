//! HTTP errors as google.rpc says: codes to statuses, and a body that carries
//! ErrorInfo and QuotaFailure (docs/http.md).

use std::collections::HashMap;

use tonic_types::{ErrorDetails, QuotaViolation};

use super::*;

#[test]
fn codes_map_as_google_rpc_code_says() {
    assert_eq!(http_status(Code::InvalidArgument), StatusCode::BAD_REQUEST);
    assert_eq!(http_status(Code::FailedPrecondition), StatusCode::BAD_REQUEST);
    assert_eq!(http_status(Code::Unauthenticated), StatusCode::UNAUTHORIZED);
    assert_eq!(http_status(Code::PermissionDenied), StatusCode::FORBIDDEN);
    assert_eq!(http_status(Code::ResourceExhausted), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(http_status(Code::Unavailable), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(http_status(Code::DeadlineExceeded), StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(http_status(Code::Cancelled).as_u16(), 499);
    assert_eq!(http_status(Code::Internal), StatusCode::INTERNAL_SERVER_ERROR);
}

#[test]
fn the_body_carries_error_info_and_quota_failure() {
    let metadata = HashMap::from([("needed".to_owned(), "3".to_owned())]);
    let status = Status::with_error_details(
        Code::Unavailable,
        "no quorum",
        ErrorDetails::with_error_info("NO_QUORUM", "redlockd", metadata),
    );
    let json = body(&status);
    assert_eq!(json["code"], 14);
    assert_eq!(json["message"], "no quorum");
    assert_eq!(json["details"][0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
    assert_eq!(json["details"][0]["metadata"]["needed"], "3");

    let mut violation = QuotaViolation::new("tenant:a", "too many");
    violation.quota_id = "max_locks_held".into();
    let status = Status::with_error_details(
        Code::ResourceExhausted,
        "quota",
        ErrorDetails::with_quota_failure(vec![violation]),
    );
    let body = body(&status);
    assert_eq!(
        body["details"][0]["@type"],
        "type.googleapis.com/google.rpc.QuotaFailure"
    );
    assert_eq!(body["details"][0]["violations"][0]["quotaId"], "max_locks_held");
    assert_eq!(body["details"][0]["violations"][0]["subject"], "tenant:a");
}
