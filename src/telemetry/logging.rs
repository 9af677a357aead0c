//! Log setup: human-readable or JSON lines through `tracing-subscriber`,
//! and beside them, when traces are exported, the OpenTelemetry layer
//! (`super::traces`). Lock values never reach a log line: `LockValue`
//! redacts itself.

use tracing_subscriber::EnvFilter;
use tracing_subscriber::prelude::*;

use super::traces::{self, ExporterError, Traces};

/// How log lines look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// For people at a terminal.
    Human,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    /// `log.filter` (or `RUST_LOG`, which wins over it) does not parse.
    #[error("log.filter: {0}")]
    Filter(tracing_subscriber::filter::ParseError),
    /// The trace exporter could not be built.
    #[error(transparent)]
    Exporter(#[from] ExporterError),
    /// The subscriber could not be installed (one was already).
    #[error("{0}")]
    Installed(Box<dyn std::error::Error + Send + Sync>),
}

/// Installs the global subscriber with `filter` (`log.filter`);
/// `RUST_LOG`, when set, wins over it. Spans of target `traces::TARGET`
/// never reach a log line; with `exporting` they are exported, and the returned
/// pipeline is shut down on exit. Must be called within the async runtime
/// when `exporting` is given.
///
/// # Errors
/// When the filter does not parse, or the exporter cannot be built.
pub(crate) fn init(
    format: Format,
    filter: &str,
    exporting: Option<&traces::Settings>,
) -> Result<Option<Traces>, LoggingError> {
    let filter = match std::env::var("RUST_LOG") {
        Ok(directives) if !directives.is_empty() => EnvFilter::try_new(directives),
        _ => EnvFilter::try_new(filter),
    }
    .map_err(LoggingError::Filter)?;
    // The spans meant for traces never make a log line, whatever the level
    // (below it, off or not, they are never made).
    let filter = filter.add_directive(
        format!("{}=off", traces::TARGET)
            .parse()
            .map_err(LoggingError::Filter)?,
    );
    let Some(settings) = exporting else {
        // Without traces, one global filter: a span or event it leaves out
        // costs its callsite's level check and nothing more.
        let builder = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr);
        let installed = match format {
            Format::Human => builder.try_init(),
            Format::Json => builder.json().flatten_event(true).try_init(),
        };
        return installed.map(|()| None).map_err(LoggingError::Installed);
    };
    // Each layer filters for itself: log lines by `log.filter`, traces by
    // their target.
    let (exporter, pipeline) = traces::layer(settings)?;
    let lines = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let lines = match format {
        Format::Human => lines.with_filter(filter).boxed(),
        Format::Json => lines.json().flatten_event(true).with_filter(filter).boxed(),
    };
    tracing_subscriber::registry()
        .with(lines)
        .with(exporter)
        .try_init()
        .map_err(|e| LoggingError::Installed(e.into()))?;
    Ok(Some(pipeline))
}
