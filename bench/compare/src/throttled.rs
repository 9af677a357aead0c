//! The daemon on a throttled or busy host (`scripts/bench-throttled`,
//! docs/performance.md#a-throttled-daemon): redlockd, its release build in
//! its own process on five healthy local masters, in a CPU cgroup at each
//! of `--conditions` cores (a CFS quota over the 100 ms period; `cgroup.rs`)
//! and, unlimited, beside a CPU hog (`hog`: a busy loop per core). Under
//! each, (a) one client and (b) `--clients` clients take and release locks
//! on distinct names in a closed loop; a Markdown table says what share of
//! the acquisitions were granted, their latency, how throttled the daemon
//! was, and how often it took a healthy master for a failing one: probe
//! timeouts, masters marked out (its log), and requests in rounds that
//! failed or timed out (its metrics).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::cgroup::{Cgroup, Hog};
use crate::daemon::{Daemon, GrpcLocker};
use crate::drive::{Locker, Timing};
use crate::measure::{CpuSnapshot, Role, Samples, Watched};
use crate::{Api, Args, say};

/// Probes the daemon makes under a condition before anything is measured.
const SETTLE: Duration = Duration::from_secs(2);

/// What the daemon logs when it takes a master out (docs/operations.md#metrics):
/// unreachable (unverified), quarantined, failed preflight, a lost connection.
const MARKED_OUT: [&str; 4] = [
    "unreachable",
    "quarantined: not counted",
    "preflight failed",
    "redis connection error",
];

/// One row: a condition and a workload.
struct Row {
    condition: String,
    workload: String,
    tally: Tally,
    seconds: f64,
    daemon_cores: f64,
    /// The five masters' busy cores, and every other process's but the
    /// daemon's and this benchmark's.
    masters_cores: f64,
    others_cores: f64,
    /// Periods, and how many throttled the daemon, in the window.
    throttled: Option<(u64, u64)>,
    probe_timeouts: f64,
    marked_out: usize,
    round_errors: f64,
}

/// What the clients saw in a window.
#[derive(Default)]
struct Tally {
    attempts: u64,
    granted: u64,
    latencies: Samples,
    /// Failed attempts by kind, and the first message of each.
    failures: BTreeMap<String, (u64, String)>,
}

/// The daemon's counters at one moment.
struct Snapshot {
    cpu: CpuSnapshot,
    throttling: Option<(u64, u64)>,
    probe_timeouts: f64,
    round_errors: f64,
    log_len: usize,
}

impl Snapshot {
    fn take(daemon: &Daemon, watched: &[Watched], cgroup: Option<&Cgroup>) -> Snapshot {
        Snapshot {
            cpu: CpuSnapshot::take(watched),
            throttling: cgroup.and_then(Cgroup::throttling),
            probe_timeouts: daemon.metric("redlock_node_probe_timeouts_total").unwrap_or(0.0),
            round_errors: daemon.metric("redlock_node_errors_total").unwrap_or(0.0),
            log_len: daemon.log().len(),
        }
    }
}

/// Runs every condition and returns the table.
pub async fn run(args: &Args) -> anyhow::Result<String> {
    let timing = Timing {
        warmup: Duration::from_secs_f64(args.warmup),
        duration: Duration::from_secs_f64(args.duration),
    };
    say("starting five redis-server masters");
    let masters = tokio::task::spawn_blocking(|| redlockd::dev::start_masters(5))
        .await?
        .map_err(anyhow::Error::msg)?;
    let urls: Vec<String> = masters.iter().map(redlockd::dev::RedisProcess::url).collect();
    let redis: Vec<Watched> = (masters.iter().filter_map(|m| m.pid()))
        .map(|pid| Watched { role: Role::Redis, pid })
        .collect();
    let binary = args.daemon.clone().unwrap_or_else(crate::daemon::default_binary);
    let mut rows = Vec::new();
    let mut loads = Vec::new();
    for condition in &args.conditions {
        let daemon = Daemon::start(&binary, &urls, 100).await?;
        let pid = daemon.pid().context("redlockd is not running")?;
        let (label, cgroup, hog) = match condition.as_str() {
            "hog" => ("no limit, beside a CPU hog".to_owned(), None, Some(Hog::start()?)),
            cores => {
                let cores: f64 = cores
                    .parse()
                    .with_context(|| format!("--conditions: {cores} is neither cores nor hog"))?;
                let unit = if cores == 1.0 { "core" } else { "cores" };
                (format!("{cores} {unit}"), Some(Cgroup::limit(pid, cores)?), None)
            }
        };
        say(format!("{label}: redlockd (pid {pid}) settling"));
        tokio::time::sleep(SETTLE).await;
        loads.push((
            label.clone(),
            std::fs::read_to_string("/proc/loadavg").unwrap_or_default(),
        ));
        let mut watched = vec![
            Watched {
                role: Role::Daemon,
                pid,
            },
            Watched {
                role: Role::Client,
                pid: std::process::id(),
            },
        ];
        watched.extend(redis.iter().cloned());
        for (workload, clients) in [("(a) 1 client", 1), ("(b) clients", args.clients)] {
            let workload = workload.replace("clients", &format!("{clients} clients"));
            say(format!("{label}: {workload}"));
            let channel = daemon.channels(1).await?.remove(0);
            let locker = match args.api {
                Api::Pipeline => GrpcLocker::pipeline(channel).await?,
                Api::Unary => GrpcLocker::unary(channel),
            };
            let before = Snapshot::take(&daemon, &watched, cgroup.as_ref());
            let (tally, seconds) = closed_loop(locker, clients, &label, timing).await;
            let after = Snapshot::take(&daemon, &watched, cgroup.as_ref());
            let cpu = before.cpu.until(&after.cpu);
            let log = daemon.log();
            let window = log.get(before.log_len..after.log_len.min(log.len())).unwrap_or("");
            rows.push(Row {
                condition: label.clone(),
                workload,
                seconds,
                daemon_cores: cpu.get(Role::Daemon).unwrap_or(0.0) / seconds,
                masters_cores: cpu.get(Role::Redis).unwrap_or(0.0) / seconds,
                others_cores: cpu.others() / seconds,
                throttled: before
                    .throttling
                    .zip(after.throttling)
                    .map(|(b, a)| (a.0 - b.0, a.1 - b.1)),
                probe_timeouts: after.probe_timeouts - before.probe_timeouts,
                marked_out: window
                    .lines()
                    .filter(|l| MARKED_OUT.iter().any(|m| l.contains(m)))
                    .count(),
                round_errors: after.round_errors - before.round_errors,
                tally,
            });
        }
        drop(hog);
        drop(cgroup);
        drop(daemon);
    }
    drop(masters);
    Ok(table(&rows, &loads, timing))
}

/// `clients` clients, each acquiring a fresh name and releasing it at once,
/// for the warm-up and then the window; an attempt counts when it started
/// in the window.
async fn closed_loop(locker: GrpcLocker, clients: usize, label: &str, timing: Timing) -> (Tally, f64) {
    let recording = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..clients)
        .map(|index| {
            let (locker, recording, stop) = (locker.clone(), recording.clone(), stop.clone());
            let prefix = format!("bench:throttled:{}:{index}", label.replace(' ', "-"));
            tokio::spawn(async move {
                let mut tally = Tally::default();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let counted = recording.load(Ordering::Relaxed);
                    let started = Instant::now();
                    let attempt = locker.once(format!("{prefix}:{n}")).await;
                    let failure = match attempt {
                        Ok(Some(held)) => {
                            if counted {
                                tally.granted += 1;
                                tally.latencies.push(started.elapsed());
                            }
                            locker
                                .release(held)
                                .await
                                .err()
                                .map(|e| ("release failed".to_owned(), format!("{e:#}")))
                        }
                        Ok(None) => Some(("not acquired".to_owned(), "acquired = false".to_owned())),
                        Err(e) => {
                            let kind = e
                                .downcast_ref::<tonic::Status>()
                                .map_or_else(|| "error".to_owned(), |status| format!("{:?}", status.code()));
                            tokio::time::sleep(Duration::from_millis(10)).await;
                            Some((kind, format!("{e:#}")))
                        }
                    };
                    if counted {
                        tally.attempts += 1;
                        if let Some((kind, message)) = failure {
                            tally.failures.entry(kind).or_insert((0, message)).0 += 1;
                        }
                    }
                }
                tally
            })
        })
        .collect();
    tokio::time::sleep(timing.warmup).await;
    let opened = Instant::now();
    recording.store(true, Ordering::Relaxed);
    tokio::time::sleep(timing.duration).await;
    recording.store(false, Ordering::Relaxed);
    let seconds = opened.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let mut all = Tally::default();
    for task in tasks {
        if let Ok(tally) = task.await {
            all.attempts += tally.attempts;
            all.granted += tally.granted;
            all.latencies.extend(tally.latencies);
            for (kind, (count, message)) in tally.failures {
                all.failures.entry(kind).or_insert((0, message)).0 += count;
            }
        }
    }
    all.latencies.sort();
    (all, seconds)
}

fn table(rows: &[Row], loads: &[(String, String)], timing: Timing) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "redlockd under a CPU limit and beside a CPU hog: healthy masters, acquire + release on distinct names, \
         {:.0} s windows after {:.0} s of warm-up.\n",
        timing.duration.as_secs_f64(),
        timing.warmup.as_secs_f64()
    );
    out.push_str(
        "| daemon's CPU | workload | acquisitions/s | granted | p50 · p99 | daemon busy (cores) | periods throttled | masters busy (cores) | other processes (cores) | probe timeouts | masters marked out | requests failed in rounds |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    let ms = |d: Option<Duration>| d.map_or_else(|| "—".to_owned(), |d| format!("{:.1} ms", d.as_secs_f64() * 1000.0));
    for row in rows {
        let t = &row.tally;
        let granted = if t.attempts == 0 {
            0.0
        } else {
            100.0 * t.granted as f64 / t.attempts as f64
        };
        let throttled = row.throttled.map_or_else(
            || "—".to_owned(),
            |(periods, throttled)| format!("{throttled} of {periods}"),
        );
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {:.2}% ({} of {}) | {} · {} | {:.2} | {} | {:.2} | {:.2} | {:.0} | {} | {:.0} |",
            row.condition,
            row.workload,
            t.attempts as f64 / row.seconds,
            granted,
            t.granted,
            t.attempts,
            ms(t.latencies.quantile(0.5)),
            ms(t.latencies.quantile(0.99)),
            row.daemon_cores,
            throttled,
            row.masters_cores,
            row.others_cores,
            row.probe_timeouts,
            row.marked_out,
            row.round_errors,
        );
    }
    let failed: Vec<&Row> = rows.iter().filter(|r| !r.tally.failures.is_empty()).collect();
    if !failed.is_empty() {
        out.push_str("\nFailed acquisitions, by kind (the first message of each):\n\n");
        for row in failed {
            for (kind, (count, message)) in &row.tally.failures {
                let _ = writeln!(
                    out,
                    "- {}, {}: {count} × {kind}: {message}",
                    row.condition, row.workload
                );
            }
        }
    }
    out.push_str("\nLoad average (1, 5, 15 min) when each condition's runs began:\n\n");
    for (label, load) in loads {
        let load: Vec<&str> = load.split_whitespace().take(3).collect();
        let _ = writeln!(out, "- {label}: {}", load.join(" "));
    }
    out
}
