//! The closed loop of workloads (a), (b) and (c), the same for every system
//! driven from this process: each client acquires, releases at once, and
//! starts over; only the measured window (after a warm-up) counts.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::measure::{CpuSnapshot, Samples, Watched};

/// How long a system gets to finish its clients' last cycles after the window.
const DRAIN_LIMIT: Duration = Duration::from_secs(30);

/// One system's lock operations, as one client sees them.
pub trait Locker: Send + Sync + 'static {
    /// A held lock, as `release` needs it.
    type Held: Send + 'static;
    /// One attempt, no waiting: `None` when someone else holds it.
    fn once(&self, name: String) -> impl Future<Output = anyhow::Result<Option<Self::Held>>> + Send;
    /// Waits (or retries, the system's own way) until held; `None` when the
    /// system gave up first (the caller asks again).
    fn waiting(&self, name: String) -> impl Future<Output = anyhow::Result<Option<Self::Held>>> + Send;
    /// Gives it back.
    fn release(&self, held: Self::Held) -> impl Future<Output = anyhow::Result<()>> + Send;
}

/// The measured window.
#[derive(Clone, Copy)]
pub struct Timing {
    pub warmup: Duration,
    pub duration: Duration,
}

/// What one system did in one workload's window.
#[derive(Default, Clone)]
pub struct Outcome {
    /// Acquisitions completed in the window (each followed by a release).
    pub ops: u64,
    /// Failed calls (transport errors, statuses), whole run.
    pub errors: u64,
    /// Single attempts that found the name taken, whole run.
    pub not_acquired: u64,
    /// The window's length.
    pub seconds: f64,
    /// Acquire latency (contended: wait from asking to holding), sorted.
    pub latencies: Samples,
    /// CPU seconds per role in the window.
    pub cpu: CpuSnapshot,
    /// The first error, for the log.
    pub first_error: Option<String>,
}

impl Outcome {
    /// The acquire latency at quantile `q` (0.5: the median).
    pub fn latency(&self, q: f64) -> Option<Duration> {
        self.latencies.quantile(q)
    }

    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.ops as f64 / self.seconds
        } else {
            0.0
        }
    }
}

#[derive(Default)]
struct Tally {
    ops: u64,
    errors: u64,
    not_acquired: u64,
    latencies: Samples,
    first_error: Option<String>,
}

/// Runs `clients` in a closed loop: on distinct names (`contended` false,
/// single attempts), or all on one name (`contended`, waiting until held).
pub async fn run<L: Locker>(
    clients: Vec<L>,
    contended: bool,
    prefix: &str,
    timing: Timing,
    watched: &[Watched],
) -> Outcome {
    let recording = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::with_capacity(clients.len());
    for (index, client) in clients.into_iter().enumerate() {
        let (recording, stop) = (recording.clone(), stop.clone());
        let prefix = prefix.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut tally = Tally::default();
            let mut n: u64 = 0;
            // Contended: the wait counts from the moment the client wanted
            // the lock, across the system's give-ups.
            let mut wanted: Option<Instant> = None;
            while !stop.load(Ordering::Relaxed) {
                let name = if contended {
                    format!("{prefix}:c")
                } else {
                    n += 1;
                    format!("{prefix}:{index}:{n}")
                };
                let started = *wanted.get_or_insert_with(Instant::now);
                let attempt = if contended {
                    client.waiting(name).await
                } else {
                    client.once(name).await
                };
                match attempt {
                    Ok(Some(held)) => {
                        wanted = None;
                        if recording.load(Ordering::Relaxed) {
                            tally.ops += 1;
                            tally.latencies.push(started.elapsed());
                        }
                        if let Err(e) = client.release(held).await {
                            tally.errors += 1;
                            tally.first_error.get_or_insert_with(|| format!("release: {e:#}"));
                        }
                    }
                    Ok(None) => {
                        if !contended {
                            wanted = None;
                            tally.not_acquired += 1;
                        }
                    }
                    Err(e) => {
                        wanted = None;
                        tally.errors += 1;
                        tally.first_error.get_or_insert_with(|| format!("acquire: {e:#}"));
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
            }
            tally
        }));
    }
    tokio::time::sleep(timing.warmup).await;
    let before = CpuSnapshot::take(watched);
    let opened = Instant::now();
    recording.store(true, Ordering::Relaxed);
    tokio::time::sleep(timing.duration).await;
    recording.store(false, Ordering::Relaxed);
    let seconds = opened.elapsed().as_secs_f64();
    let after = CpuSnapshot::take(watched);
    stop.store(true, Ordering::Relaxed);

    let mut outcome = Outcome {
        seconds,
        cpu: before.until(&after),
        ..Outcome::default()
    };
    let deadline = tokio::time::Instant::now() + DRAIN_LIMIT;
    for mut task in tasks {
        match tokio::time::timeout_at(deadline, &mut task).await {
            Ok(Ok(tally)) => {
                outcome.ops += tally.ops;
                outcome.errors += tally.errors;
                outcome.not_acquired += tally.not_acquired;
                outcome.latencies.extend(tally.latencies);
                if outcome.first_error.is_none() {
                    outcome.first_error = tally.first_error;
                }
            }
            Ok(Err(e)) => {
                outcome.errors += 1;
                outcome.first_error.get_or_insert_with(|| format!("client task: {e}"));
            }
            Err(_) => {
                task.abort();
                outcome
                    .first_error
                    .get_or_insert_with(|| "a client did not finish its last cycle".into());
            }
        }
    }
    outcome.latencies.sort();
    outcome
}
