//! Log setup: human-readable or JSON lines through `tracing-subscriber`.
//! Lock values never reach a log line: `LockValue` redacts itself.

use tracing_subscriber::EnvFilter;

use crate::config::{LogConfig, LogFormat};

/// Installs the global subscriber. `RUST_LOG`, when set, wins over
/// `log.filter`.
///
/// # Errors
/// When the filter does not parse.
pub fn init(config: &LogConfig) -> Result<(), String> {
    let filter = match std::env::var("RUST_LOG") {
        Ok(directives) if !directives.is_empty() => EnvFilter::try_new(directives),
        _ => EnvFilter::try_new(&config.filter),
    }
    .map_err(|e| format!("log.filter: {e}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let installed = match config.format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    installed.map_err(|e| e.to_string())
}
