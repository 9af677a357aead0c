//! The performance budget (docs/performance.md#the-budget): what a lock
//! cycle of workloads (a) and (b) costs in what cannot jitter, against
//! bench/budget/budget.toml. Run by `scripts/check-budget`, which builds it
//! (`cargo build --example check-budget`).
//!
//! 1. Calls: five fresh masters and the daemon, natively; once every master
//!    is usable, each workload once on its names (warm-up), the fence
//!    counters levelled, `CONFIG RESETSTAT` on every master, the same pass
//!    again, `INFO commandstats`: calls per cycle per master. (a) pauses
//!    after each measured cycle and runs again while a master lagged.
//! 2. Instructions: the same under `valgrind --tool=callgrind`, counters
//!    zeroed before the second pass and dumped after it; the idle rate
//!    (measured the same way with no load) times the window is taken off.
//!
//! Exit status: 0 within the budget, 1 over it (each violation named), 2
//! when the measurement itself failed.
//!
//! `daemon` starts the daemon under measure, `masters` reads the masters'
//! counts, `load` runs the fixed loads, `verdict` holds the budget against
//! what was measured.

mod daemon;
mod load;
mod masters;
mod verdict;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use daemon::Daemon;
use load::Workload;
use verdict::{Budget, Measured};

/// How long the daemon may take to count every master usable, and then to
/// grant its first lock (valgrind is slow).
const FIRST_GRANT_LIMIT: Duration = Duration::from_secs(180);
/// After a pass, before counting: the slower masters' deletes of the last
/// release still land (a release answers at quorum).
const SETTLE: Duration = Duration::from_millis(300);
/// Under callgrind the daemon is about 50 times slower.
const SETTLE_CALLGRIND: Duration = Duration::from_secs(2);
/// (a)'s pause after each measured cycle, so that every master is done
/// with a release before the next lock (natively; under callgrind).
const GAP: Duration = Duration::from_millis(3);
const GAP_CALLGRIND: Duration = Duration::from_millis(20);
/// Passes of (a) while a master lags behind the others.
const TRIES: u32 = 3;
/// The idle window whose instructions per second are taken off.
const IDLE: Duration = Duration::from_secs(4);

#[derive(Parser)]
#[command(about = "Checks redlockd's Redis calls and instructions per lock cycle against the budget")]
struct Args {
    /// The daemon binary (default: the debug build, in $CARGO_TARGET_DIR or
    /// target/; the budget's instruction counts are of a debug build).
    #[arg(long)]
    daemon: Option<PathBuf>,
    /// The budget file.
    #[arg(long, default_value = "bench/budget/budget.toml")]
    budget: PathBuf,
    /// Count calls only (no callgrind run).
    #[arg(long)]
    calls_only: bool,
    /// Plant the test-only extra call in the grant script
    /// (REDLOCKD_TEST_PLANTED_CALL; debug builds only): the check must fail.
    #[arg(long)]
    planted: bool,
    /// Also write what was measured to this file, as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

impl Args {
    fn daemon(&self) -> PathBuf {
        self.daemon.clone().unwrap_or_else(|| {
            let target = std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| "target".into());
            PathBuf::from(target).join("debug").join("redlockd")
        })
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let budget = match Budget::load(&args.budget) {
        Ok(budget) => budget,
        Err(e) => {
            eprintln!("check-budget: {e:#}");
            return ExitCode::from(2);
        }
    };
    let measured = match measure_all(&args).await {
        Ok(measured) => measured,
        Err(e) => {
            eprintln!("check-budget: the measurement failed: {e:#}");
            return ExitCode::from(2);
        }
    };
    if let Some(path) = &args.json {
        let written = serde_json::to_string_pretty(&measured)
            .map_err(anyhow::Error::from)
            .and_then(|json| Ok(std::fs::write(path, json)?));
        if let Err(e) = written {
            eprintln!("check-budget: writing {}: {e:#}", path.display());
            return ExitCode::from(2);
        }
    }
    let (table, violations) = verdict::judge(&budget, &measured);
    println!("{table}");
    if violations.is_empty() {
        println!("check-budget: within the budget ({})", args.budget.display());
        ExitCode::SUCCESS
    } else {
        for v in &violations {
            println!("check-budget: OVER BUDGET: {v}");
        }
        println!(
            "check-budget: a change that costs more on purpose raises {} in the same commit, \
             its reason in the message (docs/performance.md#the-budget)",
            args.budget.display()
        );
        ExitCode::FAILURE
    }
}

async fn measure_all(args: &Args) -> anyhow::Result<BTreeMap<&'static str, Measured>> {
    let mut measured: BTreeMap<&'static str, Measured> = BTreeMap::new();
    eprintln!("check-budget: counting Redis calls ({})", args.daemon().display());
    for (workload, calls) in run(args, false).await? {
        measured.entry(workload.key()).or_default().calls = calls.calls;
    }
    if !args.calls_only {
        eprintln!("check-budget: counting the daemon's instructions under callgrind");
        for (workload, counted) in run(args, true).await? {
            measured.entry(workload.key()).or_default().instructions = counted.instructions;
        }
    }
    Ok(measured)
}

/// One daemon on five fresh masters, both workloads.
async fn run(args: &Args, callgrind: bool) -> anyhow::Result<Vec<(Workload, Measured)>> {
    let servers = redlockd::dev::start_masters(5).map_err(anyhow::Error::msg)?;
    let nodes: Vec<String> = servers.iter().map(|m| m.url()).collect();
    let ports: Vec<u16> = servers.iter().map(|m| m.port()).collect();
    let mut daemon = Daemon::start(&args.daemon(), &nodes, callgrind, args.planted).await?;
    let outcome = async {
        daemon.wait_usable(ports.len(), FIRST_GRANT_LIMIT).await?;
        let pipeline = load::connect(&daemon.addr).await?;
        load::first_grant(&pipeline, FIRST_GRANT_LIMIT).await?;
        let (settle, gap) = if callgrind {
            (SETTLE_CALLGRIND, GAP_CALLGRIND)
        } else {
            (SETTLE, GAP)
        };
        let mut results = Vec::new();
        for workload in Workload::ALL {
            // The same names twice: the measured pass finds every bucket
            // used (its counter there), as a running daemon does, and the
            // counters level (no round two: masters::level_counters).
            load::pass(&pipeline, workload, Duration::ZERO).await?;
            tokio::time::sleep(settle).await;
            masters::level_counters(&ports)?;
            // (a) pauses after each cycle, and runs again while a master
            // lagged behind the others all the same (a release and the next
            // lock in one script: fewer calls, and fewer instructions).
            let gap = if workload == Workload::A { gap } else { Duration::ZERO };
            let mut tries = 1;
            let pass = loop {
                let pass = measured_pass(&mut daemon, &pipeline, &ports, workload, gap, settle).await?;
                let level = pass.calls.iter().all(|c| *c == pass.calls[0]);
                if workload == Workload::B || level || tries == TRIES {
                    break pass;
                }
                tries += 1;
                let scripts: Vec<u64> = pass
                    .calls
                    .iter()
                    .map(|c| c.get("evalsha").copied().unwrap_or(0))
                    .collect();
                eprintln!(
                    "check-budget:   ({}) a master lagged behind (scripts per master: {scripts:?}): once more",
                    workload.key()
                );
            };
            let cycles = workload.cycles() as f64;
            let mut m = Measured::default();
            if callgrind {
                m.instructions = pass.instructions.map(|ir| ir as f64 / cycles);
            } else {
                for calls in pass.calls {
                    for (command, n) in calls {
                        m.calls.entry(command).or_default().push(n as f64 / cycles);
                    }
                }
            }
            results.push((workload, m, pass.window));
            eprintln!(
                "check-budget:   ({}) {} cycles measured",
                workload.key(),
                workload.cycles()
            );
        }
        if callgrind {
            // What the daemon does with no load, per second, off each window.
            daemon.zero()?;
            let started = tokio::time::Instant::now();
            tokio::time::sleep(IDLE).await;
            let window = started.elapsed();
            let idle_per_second = daemon.dump()? as f64 / window.as_secs_f64();
            eprintln!("check-budget:   idle: {idle_per_second:.0} instructions per second");
            for (workload, m, window) in &mut results {
                let idle = idle_per_second * window.as_secs_f64() / workload.cycles() as f64;
                if let Some(per_cycle) = m.instructions.as_mut() {
                    *per_cycle -= idle;
                }
            }
        }
        anyhow::Ok(results.into_iter().map(|(w, m, _)| (w, m)).collect())
    }
    .await;
    outcome.map_err(|e| {
        anyhow::anyhow!(
            "{e:#}\nthe daemon's log (its last 40 lines):\n{}",
            tail(&daemon.log(), 40)
        )
    })
}

/// What one measured pass counted.
struct Pass {
    /// Each master's calls.
    calls: Vec<masters::Calls>,
    /// The daemon's instructions (under callgrind).
    instructions: Option<u64>,
    /// From the counters zeroed to their reading.
    window: Duration,
}

/// Counters zeroed, one pass of `workload`, counters read.
async fn measured_pass(
    daemon: &mut Daemon,
    pipeline: &redlockd_client::Pipeline,
    ports: &[u16],
    workload: Workload,
    gap: Duration,
    settle: Duration,
) -> anyhow::Result<Pass> {
    for &port in ports {
        masters::reset(port)?;
    }
    let callgrind = daemon.under_callgrind();
    if callgrind {
        daemon.zero()?;
    }
    let started = tokio::time::Instant::now();
    load::pass(pipeline, workload, gap).await?;
    tokio::time::sleep(settle).await;
    let window = started.elapsed();
    let instructions = if callgrind { Some(daemon.dump()?) } else { None };
    let calls = ports
        .iter()
        .map(|&port| masters::read(port))
        .collect::<anyhow::Result<_>>()?;
    Ok(Pass {
        calls,
        instructions,
        window,
    })
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
