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
mod tests {
    use super::*;

    fn resolved(endpoint: Option<&str>, vars: &[(&str, &str)]) -> Result<OtlpConfig, ConfigError> {
        let mut otlp = OtlpConfig {
            endpoint: endpoint.map(str::to_owned),
            ..OtlpConfig::default()
        };
        otlp.resolve(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned()))?;
        Ok(otlp)
    }

    #[test]
    fn traces_are_off_unless_an_endpoint_is_set_or_named_by_the_standard_variables() {
        assert_eq!(resolved(None, &[]).unwrap().endpoint, None);
        assert_eq!(
            resolved(Some(""), &[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])
                .unwrap()
                .endpoint,
            None
        );
        let general = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4317")];
        assert_eq!(
            resolved(None, &general).unwrap().endpoint.as_deref(),
            Some("http://a:4317")
        );
        let both = [general[0], ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://b:4317")];
        assert_eq!(
            resolved(None, &both).unwrap().endpoint.as_deref(),
            Some("https://b:4317")
        );
        // The setting wins over both variables.
        assert_eq!(
            resolved(Some("http://c:1"), &both).unwrap().endpoint.as_deref(),
            Some("http://c:1")
        );
    }

    #[test]
    fn the_configuration_reads_the_setting_and_the_standard_variables_from_its_environment() {
        let load = |pairs: &[(&str, &str)]| {
            let mut env: std::collections::HashMap<String, String> =
                pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
            let nodes = (1..=5).map(|i| format!("redis://127.0.0.1:{i}")).collect::<Vec<_>>();
            env.insert("REDLOCKD__REDIS__NODES".into(), nodes.join(","));
            crate::config::Config::load(None, Some(env))
        };
        assert_eq!(load(&[]).unwrap().telemetry.otlp.endpoint, None);
        let config = load(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317")]).unwrap();
        assert_eq!(config.telemetry.otlp.endpoint.as_deref(), Some("http://collector:4317"));
        let config = load(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317"),
            ("REDLOCKD__TELEMETRY__OTLP__ENDPOINT", "https://mine:4317"),
            ("REDLOCKD__TELEMETRY__OTLP__SAMPLE_RATIO", "0.25"),
        ])
        .unwrap();
        assert_eq!(config.telemetry.otlp.endpoint.as_deref(), Some("https://mine:4317"));
        assert_eq!(config.telemetry.otlp.sample_ratio, 0.25);
        let err = load(&[("REDLOCKD__TELEMETRY__OTLP__TIMEOUT", "0s")]).unwrap_err();
        assert_eq!(err.0, "telemetry.otlp.timeout (0s) must lie within [10ms, 1m]");
    }

    #[test]
    fn a_bad_endpoint_ratio_or_timeout_is_named_with_its_range() {
        let err = resolved(Some("collector:4317"), &[]).unwrap_err();
        assert!(
            err.0
                .starts_with("telemetry.otlp.endpoint (\"collector:4317\") must be an http://"),
            "{err}"
        );
        let err = resolved(None, &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://")]).unwrap_err();
        assert!(
            err.0
                .starts_with("OTEL_EXPORTER_OTLP_ENDPOINT (telemetry.otlp.endpoint unset)"),
            "{err}"
        );
        let mut otlp = OtlpConfig {
            sample_ratio: 1.5,
            ..OtlpConfig::default()
        };
        let err = otlp.resolve(|_| None).unwrap_err();
        assert_eq!(err.0, "telemetry.otlp.sample_ratio (1.5) must lie within [0, 1]");
        otlp = OtlpConfig {
            timeout: Duration::from_secs(120),
            ..OtlpConfig::default()
        };
        let err = otlp.resolve(|_| None).unwrap_err();
        assert_eq!(err.0, "telemetry.otlp.timeout (2m) must lie within [10ms, 1m]");
    }
}
