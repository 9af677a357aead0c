//! The status page's rates ring (docs/operations.md#status-page): counts
//! per step, the step under way last, ten minutes kept.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::telemetry::labels::Status;
use crate::telemetry::labels::{Failure, LockKind};

fn counts(view: &Value, series: &str) -> Vec<u64> {
    view[series]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

#[test]
fn each_step_counts_what_happened_in_it_and_the_step_under_way_comes_last() {
    let metrics = Arc::new(Metrics::new());
    let rates = Rates::new(metrics.clone());
    let took = Duration::from_millis(1);
    metrics.acquired(LockKind::ALL[0], Status::Success, None, took);
    metrics.acquired(LockKind::ALL[0], Status::Success, None, took);
    metrics.acquired(LockKind::ALL[0], Status::Fail, Some(Failure::ALL[0]), took);
    rates.sample();
    metrics.extended(Status::Fail, took);
    metrics.acquired(LockKind::ALL[0], Status::Error, Some(Failure::ALL[0]), took);
    let view = rates.view();
    assert_eq!(view["stepSeconds"], 10);
    assert_eq!(counts(&view, "acquired"), [2, 0]);
    assert_eq!(counts(&view, "failed"), [1, 1]);
    assert_eq!(counts(&view, "lost"), [0, 1]);
}

#[test]
fn the_ring_keeps_ten_minutes() {
    let rates = Rates::new(Arc::new(Metrics::new()));
    for _ in 0..100 {
        rates.sample();
    }
    assert_eq!(counts(&rates.view(), "acquired").len(), KEPT + 1);
}
