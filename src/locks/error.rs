//! The daemon's one error enum and its mapping to gRPC status codes (the
//! only place that mapping is written). Contention is not an error.

use std::collections::HashMap;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::redlock::NodeVote;

/// Everything a request can fail with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A request field is out of range.
    #[error("invalid {field}: {reason}")]
    InvalidArgument {
        /// The field's name as in the `.proto`.
        field: &'static str,
        /// What was wrong and what is allowed.
        reason: String,
    },
    /// Fewer than a quorum of nodes answered.
    #[error("only {reached} of the Redis masters could take part ({detail}); {needed} are needed for a quorum")]
    Unavailable {
        /// How many nodes answered.
        reached: usize,
        /// The quorum.
        needed: usize,
        /// What the nodes said, by kind.
        detail: String,
        /// What each node said, in index order (acquire only).
        votes: Vec<NodeVote>,
    },
    /// The daemon is shutting down and takes no new sessions.
    #[error("the daemon is shutting down")]
    ShuttingDown,
    /// No valid bearer token (authentication is on).
    #[error("{0}")]
    Unauthenticated(String),
    /// The caller's tenant may not lock this resource.
    #[error("{0}")]
    PermissionDenied(String),
    /// A waiter or session limit was hit.
    #[error("{0}")]
    ResourceExhausted(String),
    /// The client's gRPC deadline passed first.
    #[error("the request's deadline passed before the lock could be taken")]
    DeadlineExceeded,
    /// The caller went away; nothing is left held.
    #[error("the request was cancelled")]
    Cancelled,
    /// A bug: a task the request depended on failed.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// Shorthand for an `InvalidArgument` error.
    pub fn invalid(field: &'static str, reason: impl Into<String>) -> Error {
        Error::InvalidArgument {
            field,
            reason: reason.into(),
        }
    }

    /// The gRPC code for this error.
    pub fn code(&self) -> Code {
        match self {
            Error::InvalidArgument { .. } => Code::InvalidArgument,
            Error::Unavailable { .. } | Error::ShuttingDown => Code::Unavailable,
            Error::DeadlineExceeded => Code::DeadlineExceeded,
            Error::Cancelled => Code::Cancelled,
            Error::Internal(_) => Code::Internal,
            Error::ResourceExhausted(_) => Code::ResourceExhausted,
            Error::Unauthenticated(_) => Code::Unauthenticated,
            Error::PermissionDenied(_) => Code::PermissionDenied,
        }
    }
}

impl From<Error> for Status {
    fn from(error: Error) -> Status {
        match &error {
            // google.rpc.ErrorInfo: what each master said, for any client.
            Error::Unavailable { votes, needed, .. } if !votes.is_empty() => {
                let mut metadata: HashMap<String, String> = votes
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (format!("node.{i}"), v.kind().to_owned()))
                    .collect();
                metadata.insert("needed".into(), needed.to_string());
                let details = ErrorDetails::with_error_info("NO_QUORUM", "redlockd", metadata);
                Status::with_error_details(error.code(), error.to_string(), details)
            }
            _ => Status::new(error.code(), error.to_string()),
        }
    }
}
