//! Traces (docs/tracing.md): a traceparent read with its state, a malformed
//! one no parent.

use super::*;
use opentelemetry::trace::TraceContextExt;

#[test]
fn a_traceparent_is_read_with_its_state_and_a_malformed_one_is_no_parent() {
    let header = |name: &str| match name {
        "traceparent" => Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        "tracestate" => Some("vendor=x"),
        _ => None,
    };
    let parent = TraceContextPropagator::new().extract(&Headers(header, std::marker::PhantomData));
    let span = parent.span();
    let context = span.span_context();
    assert_eq!(context.trace_id().to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(context.span_id().to_string(), "00f067aa0ba902b7");
    assert!(context.is_sampled() && context.is_remote());
    assert_eq!(context.trace_state().header(), "vendor=x");
    let bad = |name: &str| (name == "traceparent").then_some("00-xyz-00f067aa0ba902b7-01");
    let parent = TraceContextPropagator::new().extract(&Headers(bad, std::marker::PhantomData));
    assert!(!parent.span().span_context().is_valid());
}
