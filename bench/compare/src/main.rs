//! Side-by-side benchmark (docs/performance.md): redlockd over gRPC, as a separate
//! process, against what a user would pick instead, on the same machine and
//! the same five local `redis-server` masters, in one run:
//!
//! - rslock (crates.io), in this process;
//! - peers of other languages, each the real library in a process of its
//!   own ([`peer`]; skipped with the reason when its toolchain is missing):
//!   node-redlock 5 (`bench/node`), go-redsync (`bench/go`), and Redisson's
//!   `RLock` on one master and `RedissonRedLock` over five (`bench/java`);
//! - etcd's lock API, single node, one lease per client session (when
//!   Debian's `etcd-server` is installed);
//! - ZooKeeper, standalone, with Apache Curator's `InterProcessMutex`
//!   (`bench/java`; when Debian's `zookeeperd` is installed).
//!
//! Workloads: (a) one client, acquire + release on distinct names;
//! (b) `--clients` concurrent clients, distinct names; (c) `--clients` clients
//! on one name, each waiting until it holds it, releasing at once;
//! (d) `--sessions` open `Hold` sessions (redlockd only): the daemon's RSS
//! and CPU while it renews them; (e) leader failover and (f) observe
//! fan-out, redlockd's elections beside etcd's and Curator's on ZooKeeper
//! ([`elections`]), when named.
//! With `--throttled` (scripts/bench-throttled), redlockd alone instead, in
//! a CPU cgroup and beside a CPU hog ([`throttled`]).
//!
//! The files (docs/performance.md#method): `args` (the command line),
//! `drive` (the closed loops of (a)–(c)), `measure` (latency and `/proc`
//! CPU), the systems (`daemon`, `http` and `otlp_sink` for redlockd's
//! variants, `in_process` for rslock, `peer` and `peers`, `etcd`, `zookeeper`, and
//! `clusters` for masters that are Redis Clusters, `masters` for the sets
//! of masters as deployed and of Valkey 9), the elections
//! (`elections` over `elections_daemon`, `elections_etcd` and
//! `elections_zookeeper`, with
//! `candidate` and `elections_types`), the tables (`report`, `targets`,
//! `elections_report`, their numbers in `format`), what it ran on
//! (`environment`), and `throttled` in its `cgroup`.
//!
//! Prints Markdown tables on stdout (progress on stderr):
//!
//! ```sh
//! scripts/bench                                   # everything, from a fresh machine
//! scripts/bench --duration 5 --systems redlockd,rslock --workloads a,b
//! ```
// A benchmark measures real elapsed time: the std clock is the right one here.
#![allow(clippy::disallowed_methods)]
#![forbid(unsafe_code)]

mod args;
mod candidate;
mod cgroup;
mod clusters;
mod daemon;
mod drive;
mod elections;
mod elections_daemon;
mod elections_etcd;
mod elections_report;
mod elections_types;
mod elections_zookeeper;
mod environment;
mod etcd;
mod format;
mod http;
mod in_process;
mod masters;
mod measure;
mod otlp_sink;
mod peer;
mod peers;
mod report;
mod targets;
mod throttled;
mod zookeeper;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::Parser;

pub use crate::args::{Api, Args, System, Workload};
use crate::drive::{Outcome, Timing};
use crate::measure::{Role, Watched};

/// One system in one workload.
pub enum Run {
    Done(Outcome),
    Failed(String),
    Skipped(String),
}

/// Everything a report shows.
pub struct Results {
    pub args_line: String,
    pub environment: Vec<(String, String)>,
    pub clients: usize,
    pub runs: BTreeMap<(Workload, System), Run>,
    /// Every round's rate (ops/s) per workload and system, in order, when
    /// there was more than one round; a failed round is `None`.
    pub rounds: BTreeMap<(Workload, System), Vec<Option<f64>>>,
    /// (a)'s gRPC hop alone: Health/Check latencies, one client, no master.
    pub hop: Option<measure::Samples>,
    pub sessions: Option<Result<daemon::SessionOutcome, String>>,
    pub elections: Option<elections_types::ElectionResults>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let results = runtime.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        let (mut int, mut term) = (signal(SignalKind::interrupt())?, signal(SignalKind::terminate())?);
        // On a signal, `bench` is dropped: every server it started is stopped.
        if args.throttled {
            let table = tokio::select! {
                table = throttled::run(&args) => table?,
                _ = int.recv() => anyhow::bail!("interrupted"),
                _ = term.recv() => anyhow::bail!("terminated"),
            };
            print!("{table}");
            if let Some(out) = &args.out {
                std::fs::write(out, &table).with_context(|| format!("writing {}", out.display()))?;
            }
            return Ok(None);
        }
        tokio::select! {
            results = bench(&args) => results.map(Some),
            _ = int.recv() => anyhow::bail!("interrupted"),
            _ = term.recv() => anyhow::bail!("terminated"),
        }
    });
    // Every server this run started is stopped by now (dropped in `bench`).
    runtime.shutdown_timeout(Duration::from_secs(5));
    let Some(results) = results? else {
        return Ok(());
    };
    let report = report::markdown(&results);
    print!("{report}");
    if let Some(out) = &args.out {
        std::fs::write(out, &report).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}

fn say(message: impl AsRef<str>) {
    eprintln!("compare: {}", message.as_ref());
}

async fn bench(args: &Args) -> anyhow::Result<Results> {
    let timing = Timing {
        warmup: Duration::from_secs_f64(args.warmup),
        duration: Duration::from_secs_f64(args.duration),
    };
    let root = repository();
    let wants = |s: System| args.systems.contains(&s);
    let mut runs = BTreeMap::new();
    let mut workloads = args.workloads.clone();
    workloads.sort();
    workloads.dedup();
    // The workloads every system runs (d is redlockd's alone; e and f
    // redlockd's, etcd's and ZooKeeper's).
    let shared: Vec<Workload> = workloads.iter().copied().filter(|w| w.is_lock_loop()).collect();
    let election_workloads: Vec<Workload> = workloads.iter().copied().filter(|w| w.is_election()).collect();
    // Why etcd is not there, when it was asked for and is not.
    let mut etcd_missing = None;

    say("starting five redis-server masters");
    let masters = tokio::task::spawn_blocking(|| redlockd::dev::start_masters(5))
        .await?
        .map_err(anyhow::Error::msg)?;
    let urls: Vec<String> = masters.iter().map(redlockd::dev::RedisProcess::url).collect();
    let me = Watched {
        role: Role::Client,
        pid: std::process::id(),
    };
    let redis: Vec<Watched> = masters
        .iter()
        .filter_map(|m| m.pid())
        .map(|pid| Watched { role: Role::Redis, pid })
        .collect();

    // redlockd's positions and the Redis processes its runs are charged.
    let clusters = match args.cluster_primaries {
        0 => None,
        n => {
            say(format!("starting five Redis Clusters of {n} primaries for redlockd"));
            let started = tokio::task::spawn_blocking(move || clusters::start(5, usize::from(n))).await?;
            Some(started.map_err(anyhow::Error::msg)?)
        }
    };
    let (daemon_urls, daemon_redis) = match &clusters {
        Some(c) => (
            c.urls.clone(),
            (c.nodes.iter().filter_map(|m| m.pid()))
                .map(|pid| Watched { role: Role::Redis, pid })
                .collect(),
        ),
        None => (urls.clone(), redis.clone()),
    };
    let daemon_binary = args.daemon.clone().unwrap_or_else(daemon::default_binary);
    // The HTTP runs speak to the same daemon (one port for gRPC and HTTP).
    let http_wanted = wants(System::RedlockdHttp1) || wants(System::RedlockdHttp2);
    let mut daemon = if wants(System::Redlockd) || (http_wanted && !shared.is_empty()) {
        say(format!("starting {}", daemon_binary.display()));
        Some(daemon::Daemon::start(&daemon_binary, &daemon_urls, args.sessions + 100).await?)
    } else {
        None
    };
    // The traced daemon exports every call's spans to a receiver here
    // (docs/tracing.md); its runs sit beside the untraced daemon's.
    let traced = if wants(System::RedlockdTraced) && !shared.is_empty() {
        let sink = otlp_sink::Sink::start().await?;
        say(format!(
            "starting a traced {} (OTLP to {})",
            daemon_binary.display(),
            sink.endpoint
        ));
        let extra = format!("\n[telemetry.otlp]\nendpoint = \"{}\"\n", sink.endpoint);
        let traced = daemon::Daemon::start_with(&daemon_binary, &daemon_urls, args.sessions + 100, &extra).await?;
        Some((traced, sink))
    } else {
        None
    };
    // The variants of redlockd run (a) and (b) only.
    for system in [System::RedlockdHttp1, System::RedlockdHttp2, System::RedlockdTraced] {
        if wants(system) && shared.contains(&Workload::C) {
            runs.insert((Workload::C, system), Run::Skipped("(a) and (b) only".into()));
        }
    }
    let etcd_binary = etcd::find();
    let etcd_wanted = wants(System::Etcd) && !(shared.is_empty() && election_workloads.is_empty());
    let etcd = match (&etcd_binary, etcd_wanted) {
        (Some(binary), true) => {
            say(format!("starting {}", binary.display()));
            match etcd::Etcd::start(binary).await {
                Ok(etcd) => Some(etcd),
                Err(e) => {
                    say(format!("etcd: {e:#}"));
                    let message = format!("could not start: {e}");
                    for &w in &shared {
                        runs.insert((w, System::Etcd), Run::Failed(message.clone()));
                    }
                    etcd_missing = Some(message);
                    None
                }
            }
        }
        (None, true) => {
            let note = "not installed (`apt-get install etcd-server`)".to_owned();
            for &w in &shared {
                runs.insert((w, System::Etcd), Run::Skipped(note.clone()));
            }
            etcd_missing = Some(format!("skipped: {note}"));
            None
        }
        _ => None,
    };
    let mut peers = BTreeMap::new();
    let others = [
        System::Node,
        System::Go,
        System::Redisson,
        System::RedissonRedlock,
        System::Zookeeper,
    ];
    for system in others.into_iter().filter(|s| wants(*s) && !shared.is_empty()) {
        match peers::find(system, &root) {
            Ok(peer) => {
                peers.insert(system, peer);
            }
            Err(why) => {
                say(format!("{}: skipped: {why}", system.label()));
                for &w in &shared {
                    runs.insert((w, system), Run::Skipped(why.clone()));
                }
            }
        }
    }
    // ZooKeeper's server, for Curator's peer (when that is there).
    let zookeeper = zookeeper::start(
        wants(System::Zookeeper),
        &shared,
        !election_workloads.is_empty(),
        &mut runs,
    )
    .await;
    // Curator's elections main, for (e) and (f) on that ZooKeeper.
    let curator_elections = (wants(System::Zookeeper) && !election_workloads.is_empty())
        .then(|| peers::curator_election(&root).map(std::sync::Arc::new));

    // Masters as deployed (Redis 7 with the AOF) and Valkey 9, when named.
    let other_masters = masters::Sets::start(args, &shared, &daemon_binary, &mut runs).await;

    // (a)'s hop, per redlockd round (`None` where the round failed first).
    let mut hops: Vec<Option<measure::Samples>> = Vec::new();
    let mut systems = args.systems.clone();
    systems.sort();
    systems.dedup();
    let mut measured: BTreeMap<(Workload, System), Vec<Run>> = BTreeMap::new();
    for &workload in &shared {
        let clients = if workload == Workload::A {
            1
        } else {
            args.clients.max(1)
        };
        let contended = workload == Workload::C;
        for (round, &system) in (0..args.rounds).flat_map(|r| systems.iter().map(move |s| (r, s))) {
            if runs.contains_key(&(workload, system)) {
                continue;
            }
            let prefix = format!("bench:{}:{}:{round}", system.key(), workload.key());
            quiet(args.quiet).await;
            let of = if args.rounds > 1 {
                format!(", round {} of {}", round + 1, args.rounds)
            } else {
                String::new()
            };
            say(format!(
                "({}) {} with {clients} client(s){of}",
                workload.key(),
                system.label()
            ));
            let run: anyhow::Result<Outcome> = async {
                match system {
                    System::Redlockd => {
                        if workload == Workload::A {
                            // One entry per earlier round, whether it got as far as its hop or not.
                            hops.resize_with(round as usize, || None);
                        }
                        let daemon = daemon.as_ref().context("redlockd is not running")?;
                        let channels = daemon.channels(args.connections.max(1)).await?;
                        let mut shared = Vec::new();
                        for channel in &channels {
                            shared.push(match args.api {
                                Api::Pipeline => daemon::GrpcLocker::pipeline(channel.clone()).await?,
                                Api::Unary => daemon::GrpcLocker::unary(channel.clone()),
                            });
                        }
                        let lockers = (0..clients).map(|i| shared[i % shared.len()].clone()).collect();
                        let watched = watch(&me, &daemon_redis, daemon.pid().map(|pid| (Role::Daemon, pid)));
                        let outcome = drive::run(lockers, contended, &prefix, timing, &watched).await;
                        if workload == Workload::A {
                            hops.push(None);
                            let window = timing.duration.min(Duration::from_secs(3));
                            let samples = daemon::hop(channels[0].clone(), timing.warmup, window).await?;
                            say(format!("    gRPC hop alone: p50 {:?}", samples.quantile(0.5)));
                            *hops.last_mut().expect("pushed above") = Some(samples);
                        }
                        Ok(outcome)
                    }
                    System::RedlockdHttp1 | System::RedlockdHttp2 => {
                        let daemon = daemon.as_ref().context("redlockd is not running")?;
                        let lockers = if system == System::RedlockdHttp1 {
                            http::http1_clients(&daemon.addr, clients).await?
                        } else {
                            http::http2_clients(&daemon.addr, args.connections.max(1), clients).await?
                        };
                        let watched = watch(&me, &daemon_redis, daemon.pid().map(|pid| (Role::Daemon, pid)));
                        Ok(drive::run(lockers, contended, &prefix, timing, &watched).await)
                    }
                    System::RedlockdTraced => {
                        let (daemon, sink) = traced.as_ref().context("the traced redlockd is not running")?;
                        let mut shared = Vec::new();
                        for channel in daemon.channels(args.connections.max(1)).await? {
                            shared.push(match args.api {
                                Api::Pipeline => daemon::GrpcLocker::pipeline(channel).await?,
                                Api::Unary => daemon::GrpcLocker::unary(channel),
                            });
                        }
                        let lockers = (0..clients).map(|i| shared[i % shared.len()].clone()).collect();
                        let watched = watch(&me, &daemon_redis, daemon.pid().map(|pid| (Role::Daemon, pid)));
                        let before = sink.spans();
                        let outcome = drive::run(lockers, contended, &prefix, timing, &watched).await;
                        // Exports trail by the batch delay: counted a moment later.
                        tokio::time::sleep(Duration::from_secs(6)).await;
                        let spans = sink.spans() - before;
                        say(format!("    spans received: {spans} (warm-up and drain included)"));
                        Ok(outcome)
                    }
                    System::Rslock => {
                        let locker = in_process::RsLocker::new(&urls);
                        let watched = watch(&me, &redis, None);
                        Ok(drive::run(vec![locker; clients], contended, &prefix, timing, &watched).await)
                    }
                    System::Node | System::Go | System::Redisson | System::RedissonRedlock => {
                        let peer = peers.get(&system).context("not available")?;
                        peer.run(&urls, workload.key(), clients, timing, &redis).await
                    }
                    System::RedlockdAof | System::RslockAof | System::RedlockdValkey | System::RslockValkey => {
                        (other_masters.run(system, args, clients, contended, &prefix, timing)).await
                    }
                    System::Zookeeper => {
                        let zookeeper = zookeeper.as_ref().context("ZooKeeper is not running")?;
                        let peer = peers.get(&system).context("not available")?;
                        let (connect, watched) = (std::slice::from_ref(&zookeeper.connect), zookeeper.watched());
                        peer.run(connect, workload.key(), clients, timing, &watched).await
                    }
                    System::Etcd => {
                        let etcd = etcd.as_ref().context("etcd is not running")?;
                        let mut lockers = Vec::new();
                        for _ in 0..args.connections.max(1) {
                            let channel = etcd.channel().await?;
                            let share = clients.div_ceil(args.connections.max(1));
                            lockers.extend(etcd.clients(&channel, share).await?);
                        }
                        lockers.truncate(clients);
                        let watched = watch(&me, &[], etcd.pid().map(|pid| (Role::Etcd, pid)));
                        let outcome = drive::run(lockers.clone(), contended, &prefix, timing, &watched).await;
                        for locker in lockers {
                            locker.close().await?;
                        }
                        Ok(outcome)
                    }
                }
            }
            .await;
            let run = match run {
                Ok(outcome) => {
                    say(format!("    {}", report::one_line(&outcome)));
                    if let Some(e) = &outcome.first_error {
                        say(format!("    first error: {e}"));
                    }
                    Run::Done(outcome)
                }
                Err(e) => {
                    say(format!("    failed: {e:#}"));
                    Run::Failed(format!("{e:#}"))
                }
            };
            measured.entry((workload, system)).or_default().push(run);
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    let mut rounds = BTreeMap::new();
    let mut hop = None;
    for (key, mut all) in measured {
        if args.rounds > 1 {
            let rates = all
                .iter()
                .map(|run| match run {
                    Run::Done(o) => Some(o.rate()),
                    _ => None,
                })
                .collect();
            rounds.insert(key, rates);
        }
        let median = median_round(&all);
        if key == (Workload::A, System::Redlockd) {
            // The hop measured right after the round the tables show.
            hop = hops.get_mut(median).and_then(Option::take);
        }
        runs.insert(key, all.swap_remove(median));
    }

    let mut environment = environment::environment(
        &daemon_binary,
        daemon.is_some(),
        peers.values().map(|p| p.environment.clone()),
        etcd_binary.as_deref().filter(|_| etcd.is_some()),
    );
    if let Some(zookeeper) = &zookeeper {
        environment.push(zookeeper.environment().await);
    }
    if let (Some(_), Some(Ok(java))) = (&zookeeper, &curator_elections) {
        environment.push(java.environment.clone());
    }
    environment.extend(other_masters.environment());
    if args.cluster_primaries > 0 {
        let positions = format!("five Redis Clusters of {} primaries each", args.cluster_primaries);
        environment.push(("redlockd's positions".to_owned(), positions));
    }
    let elections = if election_workloads.is_empty() {
        None
    } else {
        let plan = elections_types::ElectionPlan {
            candidates: args.candidates as usize,
            failovers: args.failovers as usize,
            ttl: args.election_ttl,
            observers: args.observers as usize,
            observer_connections: args.observer_connections as usize,
            proclaims: args.proclaims as usize,
        };
        let servers = elections::Servers {
            daemon: daemon
                .as_ref()
                .map(|d| (d, watch(&me, &daemon_redis, d.pid().map(|pid| (Role::Daemon, pid))))),
            etcd: match (&etcd, etcd_missing) {
                (Some(etcd), _) => Some(Ok((etcd, watch(&me, &[], etcd.pid().map(|pid| (Role::Etcd, pid)))))),
                (None, Some(why)) => Some(Err(why)),
                (None, None) => None,
            },
            zookeeper: curator_elections.map(|java| match (&zookeeper, java) {
                (Some(zookeeper), Ok(java)) => Ok((zookeeper, java, watch(&me, &zookeeper.watched(), None))),
                (_, Err(why)) => Err(format!("skipped: {why}")),
                (None, Ok(_)) => Err("ZooKeeper did not start (see the log)".into()),
            }),
        };
        quiet(args.quiet).await;
        Some(elections::run(&election_workloads, plan, servers).await)
    };
    if let Some((_, sink)) = &traced {
        let spans = format!("{} spans received by the benchmark's OTLP receiver", sink.spans());
        environment.push(("redlockd (gRPC, traced)".to_owned(), spans));
    }
    drop(traced);
    // (d) measures sessions alone: etcd is no longer needed, and the daemon
    // starts afresh (its RSS before the sessions is a new daemon's).
    drop(etcd);
    drop(zookeeper);
    let sessions = if workloads.contains(&Workload::D) {
        if daemon.is_some() && !shared.is_empty() {
            drop(daemon.take());
            say("restarting redlockd for (d)");
            daemon = Some(daemon::Daemon::start(&daemon_binary, &daemon_urls, args.sessions + 100).await?);
        }
        match &daemon {
            Some(daemon) => {
                quiet(args.quiet).await;
                say(format!(
                    "(d) {} Hold sessions (TTL {:?}) over {} connections",
                    args.sessions, args.hold_ttl, args.session_connections
                ));
                let plan = daemon::SessionPlan {
                    sessions: args.sessions,
                    channels: args.session_connections,
                    ttl: args.hold_ttl,
                    duration: timing.duration,
                };
                let watched = watch(&me, &daemon_redis, daemon.pid().map(|pid| (Role::Daemon, pid)));
                let outcome = daemon::sessions(daemon, &plan, &watched)
                    .await
                    .map_err(|e| format!("{e:#}"));
                match &outcome {
                    Ok(o) => say(format!("    {}", report::sessions_line(o))),
                    Err(e) => say(format!("    failed: {e}")),
                }
                Some(outcome)
            }
            None => None,
        }
    } else {
        None
    };

    drop(daemon);
    drop(other_masters);
    drop(masters);
    drop(clusters);
    let args_line: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    Ok(Results {
        args_line: args_line.join(" "),
        environment,
        clients: args.clients,
        runs,
        rounds,
        hop,
        sessions,
        elections,
    })
}

/// The repository this benchmark belongs to (bench/compare is two levels
/// down): where bench/node, bench/go, bench/java and target/ are, wherever
/// the benchmark is started from.
pub fn repository() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.join("..").join("..");
    root.canonicalize().unwrap_or(root)
}

/// The round with the median rate (the lower middle of an even count: a
/// round that was run) when every round finished; otherwise the first
/// that did not, so that a failure shows.
fn median_round(all: &[Run]) -> usize {
    if let Some(i) = all.iter().position(|run| !matches!(run, Run::Done(_))) {
        return i;
    }
    let rate = |i: usize| match &all[i] {
        Run::Done(o) => o.rate(),
        _ => 0.0,
    };
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by(|x, y| rate(*x).total_cmp(&rate(*y)));
    order[(order.len() - 1) / 2]
}

/// Waits for a quiet machine, when asked to.
async fn quiet(limit: f64) {
    if limit > 0.0 {
        let busy = measure::wait_quiet(Duration::from_secs_f64(limit), 0.25).await;
        if busy >= 0.25 {
            say(format!(
                "the machine is still busy ({busy:.2} cores used by other processes); measuring anyway"
            ));
        }
    }
}

/// The processes whose CPU counts in one run: the client (this process), `more`, and `extra`.
fn watch(client: &Watched, more: &[Watched], extra: Option<(Role, u32)>) -> Vec<Watched> {
    let mut all = vec![client.clone()];
    all.extend_from_slice(more);
    if let Some((role, pid)) = extra {
        all.push(Watched { role, pid });
    }
    all
}
