//! What the daemon tells its operators: Prometheus metrics, the `/metrics`
//! endpoint, and log lines.

pub mod exporter;
pub mod logging;
pub mod metrics;
