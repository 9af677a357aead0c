//! What the daemon tells its operators: Prometheus metrics, the `/metrics`
//! endpoint, log lines, and OpenTelemetry traces.

pub(crate) mod exporter;
pub(crate) mod logging;
pub mod metrics;
pub mod traces;
