//! The metrics hear the algorithm: `telemetry::Metrics` as the
//! `redlock::Observer` of every master and of the monitor.

use std::time::Duration;

use crate::redlock::observer::Observer;
use crate::redlock::standing::{Check, Standing};
use crate::telemetry::metrics::Metrics;

impl Observer for Metrics {
    fn node_request(&self, node: usize, took: Duration, ok: bool) {
        Metrics::node_request(self, node, took, ok);
    }

    fn node_not_awaited(&self, node: usize) {
        Metrics::node_not_awaited(self, node);
    }

    fn probe_timed_out(&self, node: usize) {
        Metrics::probe_timed_out(self, node);
    }

    fn node_buckets_out(&self, node: usize, out: usize) {
        Metrics::node_buckets_out(self, node, out);
    }

    fn node_standing(&self, node: usize, standing: &Standing) {
        let failed = match standing {
            Standing::Failed { check, .. } => Some(check.as_str()),
            _ => None,
        };
        let checks = Check::ALL.map(Check::as_str);
        Metrics::node_standing(self, node, standing.label(), &checks, failed);
    }
}

#[cfg(test)]
#[path = "observe_tests.rs"]
mod tests;
