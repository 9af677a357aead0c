//! What a request to the daemon can fail with (`api::status` maps each to a
//! gRPC status, in one place). Contention is not an error.

use crate::redlock::{self, NodeVote};

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
    /// A tenant's quota (docs/operations.md#quotas) is used up.
    #[error("{message}")]
    QuotaExceeded {
        /// The tenant.
        tenant: String,
        /// The quota's name in the tenants file (`max_locks_held`, ...).
        quota: &'static str,
        /// What was exceeded.
        message: String,
    },
    /// The request contradicts the state the lock is in (a semaphore held
    /// with another number of permits).
    #[error("{0}")]
    FailedPrecondition(String),
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
}

impl From<redlock::Error> for Error {
    fn from(error: redlock::Error) -> Error {
        match error {
            redlock::Error::Unavailable {
                reached,
                needed,
                detail,
                votes,
            } => Error::Unavailable {
                reached,
                needed,
                detail,
                votes,
            },
            redlock::Error::Cancelled => Error::Cancelled,
            differ @ redlock::Error::PermitsDiffer { .. } => Error::FailedPrecondition(format!("permits: {differ}")),
        }
    }
}
