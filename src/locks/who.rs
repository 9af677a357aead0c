//! Who asks for a lock, and the audit trail of what they did
//! (docs/operations.md#audit): one structured event per grant, extension
//! failure, release, loss and force-release, at target `redlockd::audit`.
//! Never the lock value, never a reentrancy key or a token.

use std::fmt;
use std::sync::Arc;

use crate::locks::quota::Quota;

/// The log target of audit events.
pub(crate) const AUDIT: &str = "redlockd::audit";

/// The caller of one request, as the locks see it.
#[derive(Clone, Default)]
pub(crate) struct Who {
    /// The tenant (empty without authentication).
    pub tenant: Arc<str>,
    /// The `owner` label of the request (empty when it named none).
    pub owner: String,
    /// Where the request came from: the TLS subject with mutual TLS, the
    /// address otherwise; formatted only when an event is logged.
    pub peer: Option<Arc<dyn fmt::Display + Send + Sync>>,
    /// The tenant's quota, when it has one.
    pub quota: Option<Arc<Quota>>,
}

impl fmt::Debug for Who {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Who")
            .field("tenant", &self.tenant)
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

impl Who {
    fn peer(&self) -> String {
        self.peer.as_ref().map_or_else(|| "-".to_owned(), ToString::to_string)
    }
}

/// The resource of lock name `name` (`lock:<r>` or `tenant:<t>:lock:<r>`).
pub(crate) fn resource_of(name: &str) -> &str {
    let unscoped = name
        .strip_prefix("tenant:")
        .and_then(|rest| rest.split_once(':'))
        .map_or(name, |(_, rest)| rest);
    (unscoped.strip_prefix("lock:"))
        .or_else(|| unscoped.strip_prefix("election:"))
        .unwrap_or(name)
}

/// Logs one audit event; `owner` overrides the caller's (a release names
/// the owner the lock was granted to, when this daemon granted it).
pub(crate) fn audit(event: &'static str, who: &Who, owner: Option<&str>, name: &str, token: Option<u64>) {
    if !tracing::enabled!(target: AUDIT, tracing::Level::INFO) {
        return;
    }
    tracing::info!(
        target: AUDIT,
        event,
        tenant = &*who.tenant,
        owner = owner.unwrap_or(&who.owner),
        peer = %who.peer(),
        resource = resource_of(name),
        token,
        "audit"
    );
}

#[cfg(test)]
#[path = "who_tests.rs"]
mod tests;
