//! What a lock operation writes on the span of the call that asked for it
//! (docs/tracing.md#spans): the resource, the tenant, the outcome and the
//! fencing token. Nothing at all unless traces are exported.

use crate::locks::who::{Who, resource_of};
use crate::telemetry::traces;

/// Records the operation on lock name `name` by `who` on the current span
/// (the call's, made by the API's layer), when traces are exported.
pub(super) fn record(name: &str, who: &Who, outcome: &'static str, token: Option<u64>) {
    if !traces::exporting() {
        return;
    }
    let span = tracing::Span::current();
    span.record("resource", resource_of(name));
    span.record("tenant", &*who.tenant);
    span.record("outcome", outcome);
    if let Some(token) = token {
        // A decimal string, as JSON clients read tokens (above 2^53).
        span.record("token", token.to_string().as_str());
    }
}

/// The span a task started for the current call runs in: the call's, so
/// its rounds are the call's children; none unless traces are exported.
pub(super) fn current() -> tracing::Span {
    if traces::exporting() {
        tracing::Span::current()
    } else {
        tracing::Span::none()
    }
}

/// A copy of `resource` to record once the operation ended, when traces
/// are exported (the operation takes the name itself).
pub(super) fn name(resource: &str) -> Option<String> {
    traces::exporting().then(|| resource.to_owned())
}
