//! OpenTelemetry traces (docs/tracing.md): the spans the daemon makes are
//! `tracing` spans at target `redlockd::trace`; when an OTLP endpoint is
//! configured, a `tracing-opentelemetry` layer turns them into OpenTelemetry
//! spans and a batch processor exports them over OTLP/gRPC. Only this file
//! names the OpenTelemetry crates.
//!
//! Off (the default) the layer is not installed: the per-call span is never
//! made (`exporting` is false) and the rounds' spans are below the log
//! filter's level, so each costs the level check of a disabled callsite.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::tonic_types::transport::ClientTlsConfig;
use opentelemetry_otlp::{WithExportConfig, WithTonicConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;

/// The target of every span meant for traces (the rounds' spans in
/// `crate::redlock` use the same string).
pub const TARGET: &str = "redlockd::trace";

/// Whether spans are exported (set once, when the layer is built).
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// Whether spans are exported: the per-call span is made only then.
#[inline]
pub fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// Where and how spans are exported (from `[telemetry.otlp]`).
#[derive(Debug, Clone)]
pub struct Settings {
    /// The OTLP/gRPC collector, `http://host:port` or `https://…`.
    pub endpoint: String,
    /// The share of traces started here that are recorded.
    pub sample_ratio: f64,
    /// Bound on one export.
    pub timeout: Duration,
}

/// The exporting pipeline; `shutdown` sends what is still queued.
pub struct Traces {
    provider: SdkTracerProvider,
}

impl Traces {
    /// Exports the spans still queued (bounded by the export timeout) and
    /// stops the exporter. Call it outside the async runtime's threads,
    /// while the runtime still runs (the exporter's connection lives on it).
    pub fn shutdown(self) {
        if let Err(error) = self.provider.shutdown() {
            eprintln!("redlockd: flushing traces: {error}");
        }
    }
}

/// The OTLP exporter could not be built for `telemetry.otlp.endpoint`.
#[derive(Debug, thiserror::Error)]
#[error("telemetry.otlp.endpoint ({endpoint}): {cause}")]
pub struct ExporterError {
    /// The endpoint configured.
    pub endpoint: String,
    /// What the exporter's builder said.
    pub cause: opentelemetry_otlp::ExporterBuildError,
}

/// The layer that exports the spans of target `TARGET` (and only those),
/// and the pipeline behind it. Must be called within the async runtime
/// (the gRPC channel to the collector is set up on it).
///
/// # Errors
/// When the exporter cannot be built from `settings`.
pub fn layer<S>(settings: &Settings) -> Result<(Box<dyn Layer<S> + Send + Sync>, Traces), ExporterError>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span> + Send + Sync,
{
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .with_endpoint(settings.endpoint.clone())
        .with_timeout(settings.timeout)
        // Used for https:// endpoints only, with the system's roots.
        .with_tls_config(ClientTlsConfig::new().with_native_roots())
        .build()
        .map_err(|cause| ExporterError {
            endpoint: settings.endpoint.clone(),
            cause,
        })?;
    let mut resource = opentelemetry_sdk::Resource::builder();
    // OTEL_SERVICE_NAME (read by the builder) names the service when set.
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("redlockd");
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
            settings.sample_ratio,
        ))))
        .with_resource(resource.build())
        .build();
    let tracer = provider.tracer("redlockd");
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_level(false)
        .with_filter(Targets::new().with_target(TARGET, tracing::Level::TRACE));
    EXPORTING.store(true, Ordering::Relaxed);
    Ok((Box::new(layer), Traces { provider }))
}

/// Request headers as the W3C propagator reads them.
struct Headers<'h, F>(F, std::marker::PhantomData<&'h str>);

impl<'h, F: Fn(&str) -> Option<&'h str>> Extractor for Headers<'h, F> {
    fn get(&self, key: &str) -> Option<&str> {
        (self.0)(key)
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

/// The span of one call to `method` (`/redlockd.v1.Lock/Acquire`, or an
/// HTTP route such as `/v1/locks/{resource}:acquire`), a child
/// of the caller's span when its W3C `traceparent` (read by `header`, by
/// lowercase name) names one. Disabled unless `exporting`. The locks
/// record `resource`, `tenant`, `outcome` and `token` on it
/// (`crate::locks::traced`).
pub fn call_span<'h>(method: &str, header: impl Fn(&str) -> Option<&'h str>) -> tracing::Span {
    if !exporting() {
        return tracing::Span::none();
    }
    let span = tracing::info_span!(
        target: TARGET,
        "call",
        otel.name = method,
        otel.kind = "server",
        rpc.method = method,
        resource = Empty,
        tenant = Empty,
        outcome = Empty,
        token = Empty,
        otel.status_code = Empty,
        http.response.status_code = Empty,
        rpc.grpc.status_code = Empty,
    );
    if header("traceparent").is_some() {
        let parent = TraceContextPropagator::new().extract(&Headers(header, std::marker::PhantomData));
        // Fails only for a span the layer never saw (not exporting).
        let _ = span.set_parent(parent);
    }
    span
}

/// The span of the call running now, when exporting: the parent of the
/// calls a stream carries (`carried_span`).
pub fn current_call() -> tracing::Span {
    if exporting() {
        tracing::Span::current()
    } else {
        tracing::Span::none()
    }
}

/// The span of one call carried by the stream whose span is `stream` (a
/// `Pipeline` call, `method` such as `/redlockd.v1.Lock/Pipeline/Acquire`),
/// with the fields the locks record; disabled when `stream` is.
pub fn carried_span(stream: &tracing::Span, method: &'static str) -> tracing::Span {
    if stream.is_disabled() {
        return tracing::Span::none();
    }
    tracing::info_span!(
        target: TARGET,
        parent: stream,
        "call",
        otel.name = method,
        rpc.method = method,
        resource = Empty,
        tenant = Empty,
        outcome = Empty,
        token = Empty,
    )
}

#[cfg(test)]
#[path = "traces_tests.rs"]
mod tests;
