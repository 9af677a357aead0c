//! The rounds' spans (docs/tracing.md#spans): one `tracing` span per round
//! to the masters, at target `TARGET`, naming the masters that answered.
//! They are DEBUG spans: below the log filter's usual level they are never
//! made, and when traces are exported only the trace layer sees them.

use super::Node;

/// The target the trace layer exports (`crate::telemetry::traces::TARGET`).
pub const TARGET: &str = "redlockd::trace";

/// A round's span, named `$name`, with the `masters.answered` field
/// `answered` fills in.
macro_rules! round_span {
    ($name:literal) => {
        tracing::debug_span!(
            target: $crate::redlock::spans::TARGET,
            $name,
            masters.answered = tracing::field::Empty,
        )
    };
}
pub(super) use round_span;

/// Records on `span` the masters (by name, in order) for which
/// `answered(i)` holds; nothing when the span is not being made.
pub(super) fn answered<N: Node>(span: &tracing::Span, nodes: &[N], answered: impl Fn(usize) -> bool) {
    if span.is_disabled() {
        return;
    }
    let mut names = String::new();
    for (i, node) in nodes.iter().enumerate() {
        if answered(i) {
            if !names.is_empty() {
                names.push(',');
            }
            names.push_str(node.name());
        }
    }
    span.record("masters.answered", names.as_str());
}
