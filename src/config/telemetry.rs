//! `[telemetry]`: OpenTelemetry traces over OTLP/gRPC, off by default
//! (docs/tracing.md). The endpoint comes from `telemetry.otlp.endpoint`, else
//! from the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_ENDPOINT`.

use std::time::Duration;

use serde::Deserialize;

use super::{ConfigError, show};

/// The standard variables, the traces-only one first (it wins, as the
/// OpenTelemetry specification says).
pub(super) const ENDPOINT_VARIABLES: [&str; 2] = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"];

/// `[telemetry]`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetryConfig {
    /// `[telemetry.otlp]`
    #[serde(default)]
    pub otlp: OtlpConfig,
}

/// `[telemetry.otlp]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OtlpConfig {
    /// The OTLP/gRPC collector (`http://host:4317`); unset = no traces.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// The share of traces started here that are recorded (0 to 1); a
    /// caller's `traceparent` decides for its own traces.
    #[serde(default = "all")]
    pub sample_ratio: f64,
    /// Bound on one export to the collector.
    #[serde(default = "ten_seconds", with = "humantime_serde")]
    pub timeout: Duration,
}

fn all() -> f64 {
    1.0
}

fn ten_seconds() -> Duration {
    Duration::from_secs(10)
}

impl Default for OtlpConfig {
    fn default() -> OtlpConfig {
        OtlpConfig {
            endpoint: None,
            sample_ratio: all(),
            timeout: ten_seconds(),
        }
    }
}

impl OtlpConfig {
    /// Fills an unset endpoint from the standard variables (`var` reads
    /// one; empty counts as unset), then checks every value.
    ///
    /// # Errors
    /// A value out of range, naming the setting (or the variable it came from).
    pub(super) fn resolve(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        let mut source = "telemetry.otlp.endpoint".to_owned();
        if self.endpoint.as_deref().is_none_or(str::is_empty) {
            self.endpoint = None;
            for name in ENDPOINT_VARIABLES {
                if let Some(value) = var(name).filter(|v| !v.trim().is_empty()) {
                    source = format!("{name} (telemetry.otlp.endpoint unset)");
                    self.endpoint = Some(value.trim().to_owned());
                    break;
                }
            }
        }
        if let Some(endpoint) = &self.endpoint {
            let rest = endpoint
                .strip_prefix("http://")
                .or_else(|| endpoint.strip_prefix("https://"));
            if rest.is_none_or(|rest| rest.is_empty() || rest.starts_with('/')) {
                return Err(ConfigError(format!(
                    "{source} ({endpoint:?}) must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:4317"
                )));
            }
        }
        if !(0.0..=1.0).contains(&self.sample_ratio) {
            return Err(ConfigError(format!(
                "telemetry.otlp.sample_ratio ({}) must lie within [0, 1]",
                self.sample_ratio
            )));
        }
        if self.timeout < Duration::from_millis(10) || self.timeout > Duration::from_secs(60) {
            return Err(ConfigError(format!(
                "telemetry.otlp.timeout ({}) must lie within [10ms, 1m]",
                show(self.timeout)
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "telemetry_tests.rs"]
mod tests;
