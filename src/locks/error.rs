//! What a request to the locks can fail with, each condition a variant of
//! its own with its data (`api::status` maps each to a gRPC status, in one
//! place). Contention is not an error. The caller's authentication and
//! permissions are the API's (`api::refusal`).

use std::fmt;

use crate::redlock;

/// Everything a request to the locks can fail with.
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
    /// The quorum engine could not decide: too few masters answered, or a
    /// semaphore's masters remember another number of permits. (The engine's
    /// `Cancelled` is this error's `Cancelled`.)
    #[error(transparent)]
    Engine(redlock::Error),
    /// The daemon is shutting down and takes no new sessions.
    #[error("the daemon is shutting down")]
    ShuttingDown,
    /// A waiter or session limit of this daemon was hit.
    #[error("{count} {limit}")]
    LimitReached {
        /// Which limit.
        limit: Limit,
        /// How many there already are.
        count: usize,
    },
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
    /// The lock is held under the request's reentrancy key as another kind
    /// (docs/design.md#reentrancy).
    #[error("reentrancy_key: the lock is held under this key as {held} (this request asks for {asked})")]
    HeldAsOtherKind {
        /// The kind it is held as.
        held: &'static str,
        /// The kind the request asks for.
        asked: &'static str,
    },
    /// A term that does not lead its election (docs/design.md#elections).
    #[error("term {term} does not lead the election; {}", current_term(*.current))]
    NotLeading {
        /// The term named by the request.
        term: u64,
        /// The term that leads now, if any.
        current: Option<u64>,
    },
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

fn current_term(current: Option<u64>) -> String {
    match current {
        Some(current) => format!("the current term is {current}"),
        None => "no leader now".to_owned(),
    }
}

/// A limit of this daemon's (`lock.*` settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `lock.max_waiters`: requests waiting in the daemon.
    Waiters,
    /// `lock.max_waiters_per_resource`: requests waiting for one resource.
    WaitersPerResource,
    /// `lock.max_sessions`: open sessions.
    Sessions,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::Waiters => "requests are already waiting in this daemon, the most lock.max_waiters allows",
            Limit::WaitersPerResource => {
                "requests are already waiting for this resource, the most lock.max_waiters_per_resource allows"
            }
            Limit::Sessions => "sessions are already open in this daemon, the most lock.max_sessions allows",
        })
    }
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
            redlock::Error::Cancelled => Error::Cancelled,
            error => Error::Engine(error),
        }
    }
}
