//! What a call can fail with, by gRPC status code. Contention is not an
//! error: `acquire` answers `None`.

use std::collections::BTreeMap;

use tonic::{Code, Status};
use tonic_types::StatusExt;

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A request field is out of range (the message names it and the
    /// allowed range); nothing was sent when the client could tell.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Fewer than a quorum of the Redis masters could take part.
    #[error("unavailable: {message}")]
    Unavailable {
        /// The daemon's message.
        message: String,
        /// What each master said ("granted", "timed out", ...), by index,
        /// from the status's `ErrorInfo` when it carried one.
        nodes: BTreeMap<usize, String>,
        /// The quorum, when the daemon said it.
        needed: Option<usize>,
    },
    /// `hold` gave up: the wait ran out while someone else held the lock.
    #[error("not acquired: {0}")]
    NotAcquired(String),
    /// The lock (or the leadership) was lost while it was held: an
    /// extension failed, or the client's own deadline passed.
    #[error("lock lost: {0}")]
    LockLost(String),
    /// A precondition did not hold: a `Proclaim` or `Resign` with a term
    /// that does not lead (the message names the current one), a
    /// semaphore asked for with another number of permits.
    #[error("failed precondition: {0}")]
    FailedPrecondition(String),
    /// No valid bearer token.
    #[error("unauthenticated: {0}")]
    Unauthenticated(String),
    /// The tenant may not lock this resource.
    #[error("permission denied: {0}")]
    PermissionDenied(String),
    /// A waiter or session limit of the daemon was hit.
    #[error("resource exhausted: {0}")]
    ResourceExhausted(String),
    /// The call's deadline passed.
    #[error("deadline exceeded: {0}")]
    DeadlineExceeded(String),
    /// The daemon could not be reached or the connection failed.
    #[error("transport: {0}")]
    Transport(String),
    /// Any other status.
    #[error("{0:?}: {1}")]
    Other(Code, String),
}

impl From<Status> for Error {
    fn from(status: Status) -> Error {
        let message = status.message().to_owned();
        match status.code() {
            Code::InvalidArgument => Error::InvalidArgument(message),
            Code::Unavailable => {
                let mut nodes = BTreeMap::new();
                let mut needed = None;
                if let Some(info) = status.get_details_error_info() {
                    for (key, value) in info.metadata {
                        if let Some(index) = key.strip_prefix("node.").and_then(|i| i.parse().ok()) {
                            nodes.insert(index, value);
                        } else if key == "needed" {
                            needed = value.parse().ok();
                        }
                    }
                }
                Error::Unavailable { message, nodes, needed }
            }
            Code::Unauthenticated => Error::Unauthenticated(message),
            Code::PermissionDenied => Error::PermissionDenied(message),
            Code::ResourceExhausted => Error::ResourceExhausted(message),
            Code::DeadlineExceeded => Error::DeadlineExceeded(message),
            Code::FailedPrecondition => Error::FailedPrecondition(message),
            code => Error::Other(code, message),
        }
    }
}

impl From<tonic::transport::Error> for Error {
    fn from(error: tonic::transport::Error) -> Error {
        Error::Transport(error.to_string())
    }
}
