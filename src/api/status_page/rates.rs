//! The rates the status page plots (docs/operations.md#status-page): the
//! registry's acquire, failure and LOST counters read every ten seconds
//! into a small ring, so the page draws the last ten minutes as counts per
//! ten seconds without keeping anything per request.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::{Value, json};

use crate::telemetry::metrics::{Metrics, Totals};

/// One step of the plots.
pub(crate) const STEP: Duration = Duration::from_secs(10);
/// Steps kept: ten minutes.
const KEPT: usize = 60;

/// The counters as read at each step, oldest first.
pub(crate) struct Rates {
    metrics: Arc<Metrics>,
    samples: Mutex<VecDeque<Totals>>,
}

impl Rates {
    /// A ring over `metrics`, read once now and then every `STEP` until
    /// the ring is dropped.
    pub(crate) fn start(metrics: Arc<Metrics>) -> Arc<Rates> {
        let rates = Arc::new(Rates::new(metrics));
        tokio::spawn(Rates::sample_every(Arc::downgrade(&rates), STEP));
        rates
    }

    fn new(metrics: Arc<Metrics>) -> Rates {
        let first = metrics.totals();
        Rates {
            metrics,
            samples: Mutex::new(VecDeque::from([first])),
        }
    }

    async fn sample_every(rates: Weak<Rates>, step: Duration) {
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + step, step);
        loop {
            ticks.tick().await;
            let Some(rates) = rates.upgrade() else {
                return;
            };
            rates.sample();
        }
    }

    /// Reads the counters into the ring.
    pub(crate) fn sample(&self) {
        let now = self.metrics.totals();
        let mut samples = self.samples.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        samples.push_back(now);
        while samples.len() > KEPT + 1 {
            samples.pop_front();
        }
    }

    /// Counts per step, oldest first, the step under way last (so far):
    /// `{"stepSeconds":10,"acquired":[…],"failed":[…],"lost":[…]}`.
    pub(crate) fn view(&self) -> Value {
        let now = self.metrics.totals();
        let samples = self.samples.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let points: Vec<&Totals> = samples.iter().chain(std::iter::once(&now)).collect();
        let steps = |of: fn(&Totals) -> u64| -> Vec<u64> {
            points.windows(2).map(|w| of(w[1]).saturating_sub(of(w[0]))).collect()
        };
        json!({
            "stepSeconds": STEP.as_secs(),
            "acquired": steps(|t| t.acquired),
            "failed": steps(|t| t.failed),
            "lost": steps(|t| t.lost),
        })
    }
}

#[cfg(test)]
#[path = "rates_tests.rs"]
mod tests;
