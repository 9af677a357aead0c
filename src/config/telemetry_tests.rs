//! `[telemetry]` (docs/configuration.md): the OTLP endpoint from the setting
//! and the standard variables, and bad values named with their range.

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
