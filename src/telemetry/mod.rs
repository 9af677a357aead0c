//! What the daemon tells its operators: Prometheus metrics (`metrics`,
//! their label values as types in `labels`),
//! the `/metrics` endpoint on its own port (`exporter`), log lines
//! (`logging`), and OpenTelemetry traces (`traces`, docs/tracing.md).

pub(crate) mod exporter;
pub mod labels;
pub(crate) mod logging;
pub mod metrics;
pub mod traces;
