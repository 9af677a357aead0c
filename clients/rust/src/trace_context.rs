//! The caller's trace context on every call (docs/tracing.md#clients): with
//! the `opentelemetry` feature, each call carries the W3C `traceparent` (and
//! `tracestate`) of `opentelemetry::Context::current()` (the span entered,
//! with `tracing-opentelemetry`), through the propagator the application
//! installed (`opentelemetry::global::set_text_map_propagator`). Without the
//! feature the crate does not depend on OpenTelemetry and adds nothing.

use tonic::metadata::MetadataMap;

/// Adds the current trace context, if any, to `metadata`.
#[cfg(feature = "opentelemetry")]
pub(crate) fn add_to(metadata: &mut MetadataMap) {
    use tonic::metadata::{MetadataKey, MetadataValue};

    struct Injector<'a>(&'a mut MetadataMap);

    impl opentelemetry::propagation::Injector for Injector<'_> {
        fn set(&mut self, key: &str, value: String) {
            if let (Ok(key), Ok(value)) = (MetadataKey::from_bytes(key.as_bytes()), MetadataValue::try_from(value)) {
                self.0.insert(key, value);
            }
        }
    }

    let context = opentelemetry::Context::current();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut Injector(metadata));
    });
}

/// Without the `opentelemetry` feature: nothing.
#[cfg(not(feature = "opentelemetry"))]
#[inline]
pub(crate) fn add_to(_: &mut MetadataMap) {}
