//! What the daemon tells its operators: Prometheus metrics (`metrics`),
//! the `/metrics` endpoint on its own port (`exporter`), log lines
//! (`logging`), and OpenTelemetry traces (`traces`, docs/tracing.md).

pub(crate) mod exporter;
pub(crate) mod logging;
pub mod metrics;
pub mod traces;
