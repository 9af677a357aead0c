//! Every error a request can end with, as a gRPC status: the only place
//! the mapping is written. UNAVAILABLE carries a `google.rpc.ErrorInfo`
//! with what each master said; RESOURCE_EXHAUSTED for a tenant's quota a
//! `google.rpc.QuotaFailure` naming it.

use std::collections::HashMap;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, QuotaViolation, StatusExt};

use crate::api::error::Error;
use crate::locks;
use crate::redlock;

/// The gRPC code for `error`.
pub(crate) fn code(error: &Error) -> Code {
    match error {
        Error::Locks(error) => locks_code(error),
        Error::Unauthenticated(_) => Code::Unauthenticated,
        Error::PermissionDenied(_) => Code::PermissionDenied,
    }
}

/// The gRPC code for what the locks failed with.
fn locks_code(error: &locks::error::Error) -> Code {
    use locks::error::Error;
    match error {
        Error::InvalidArgument { .. } => Code::InvalidArgument,
        Error::Engine(redlock::Error::Unavailable { .. }) | Error::ShuttingDown => Code::Unavailable,
        Error::DeadlineExceeded => Code::DeadlineExceeded,
        Error::Engine(redlock::Error::PermitsDiffer { .. })
        | Error::HeldAsOtherKind { .. }
        | Error::NotLeading { .. } => Code::FailedPrecondition,
        Error::Cancelled | Error::Engine(redlock::Error::Cancelled) => Code::Cancelled,
        Error::Internal(_) => Code::Internal,
        Error::LimitReached { .. } | Error::QuotaExceeded { .. } => Code::ResourceExhausted,
    }
}

impl From<locks::error::Error> for Status {
    fn from(error: locks::error::Error) -> Status {
        Status::from(Error::Locks(error))
    }
}

impl From<Error> for Status {
    fn from(error: Error) -> Status {
        match &error {
            // google.rpc.ErrorInfo: what each master said, for any client.
            Error::Locks(locks::error::Error::Engine(redlock::Error::Unavailable { votes, needed, .. }))
                if !votes.is_empty() =>
            {
                let mut metadata: HashMap<String, String> = votes
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (format!("node.{i}"), v.kind().to_owned()))
                    .collect();
                metadata.insert("needed".into(), needed.to_string());
                let details = ErrorDetails::with_error_info("NO_QUORUM", "redlockd", metadata);
                Status::with_error_details(code(&error), error.to_string(), details)
            }
            // google.rpc.QuotaFailure: which tenant, and which quota.
            Error::Locks(locks::error::Error::QuotaExceeded { tenant, quota, message }) => {
                let mut violation = QuotaViolation::new(format!("tenant:{tenant}"), message.clone());
                violation.quota_id = (*quota).to_owned();
                violation.quota_metric = format!("redlockd/{quota}");
                let details = ErrorDetails::with_quota_failure(vec![violation]);
                Status::with_error_details(code(&error), error.to_string(), details)
            }
            _ => Status::new(code(&error), error.to_string()),
        }
    }
}
