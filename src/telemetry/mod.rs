//! What the daemon tells its operators: Prometheus metrics, the `/metrics`
//! endpoint, and log lines.

pub(crate) mod exporter;
pub(crate) mod logging;
pub mod metrics;
