//! Log setup: human-readable or JSON lines through `tracing-subscriber`.
//! Lock values never reach a log line: `LockValue` redacts itself.

use tracing_subscriber::EnvFilter;

/// How log lines look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// For people at a terminal.
    Human,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Installs the global subscriber with `filter` (`log.filter`);
/// `RUST_LOG`, when set, wins over it.
///
/// # Errors
/// When the filter does not parse.
pub(crate) fn init(format: Format, filter: &str) -> Result<(), String> {
    let filter = match std::env::var("RUST_LOG") {
        Ok(directives) if !directives.is_empty() => EnvFilter::try_new(directives),
        _ => EnvFilter::try_new(filter),
    }
    .map_err(|e| format!("log.filter: {e}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let installed = match format {
        Format::Human => builder.try_init(),
        Format::Json => builder.json().flatten_event(true).try_init(),
    };
    installed.map_err(|e| e.to_string())
}
