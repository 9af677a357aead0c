//! What a request to the API can end with: what the locks failed with, or
//! the caller refused before any lock was touched (not authenticated, or
//! not allowed: docs/security.md#tenants-and-bearer-tokens). `status.rs` maps each to a
//! gRPC status.

use crate::locks;
use crate::redlock;

/// Everything an API request can fail with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Error {
    /// What the locks (or the request's validation) failed with.
    #[error(transparent)]
    Locks(#[from] locks::error::Error),
    /// No valid bearer token (authentication is on).
    #[error("{0}")]
    Unauthenticated(String),
    /// The caller's tenant may not lock this resource, or lacks a scope.
    #[error("{0}")]
    PermissionDenied(String),
}

impl Error {
    /// Shorthand for the locks' `InvalidArgument`.
    pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> Error {
        Error::Locks(locks::error::Error::invalid(field, reason))
    }
}

impl From<redlock::Error> for Error {
    fn from(error: redlock::Error) -> Error {
        Error::Locks(error.into())
    }
}
