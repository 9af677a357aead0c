//! The `redlockd` binary: parse arguments, load and validate the config
//! before binding any port, install logging, serve until SIGTERM/SIGINT.
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use redlockd::config::Config;

/// jemalloc rather than glibc's malloc: glibc spent a sixth of the daemon's
/// time under workload (b) of the benchmark (docs/performance.md) in `malloc`/`free`, much of it in
/// `malloc_consolidate` (run for every request of 1 KB or more); jemalloc
/// cuts the daemon's CPU per lock cycle by about an eighth and keeps the RSS
/// of 10,000 sessions where glibc's was (45-46 MB; mimalloc's was 59 MB).
/// Without the `jemalloc` feature (on by default) the binary uses the
/// system allocator.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Exit code for a configuration that cannot be used (EX_USAGE).
const EXIT_CONFIG: u8 = 64;

/// How long the runtime's blocking threads may take to finish at exit, once
/// the daemon has stopped.
const RUNTIME_STOP: std::time::Duration = std::time::Duration::from_secs(1);

/// A distributed-lock daemon: Redlock over independent Redis masters, with
/// fencing tokens, over gRPC.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// A TOML file whose settings override config/default.toml (the
    /// environment, REDLOCKD__SECTION__KEY, overrides both).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve against the configured masters (the default).
    Serve,
    /// Start local redis-server masters on free ports and serve against them.
    Dev {
        /// How many masters to start (odd, 3 to 15).
        #[arg(long, default_value_t = 5)]
        nodes: usize,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let workers = match Config::workers(cli.config.as_deref(), None) {
        Ok(workers) => workers,
        Err(e) => {
            eprintln!("redlockd: invalid configuration: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build();
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("redlockd: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Signal handlers first: a SIGTERM at any later moment shuts down
    // cleanly (and `redlockd dev` stops its masters).
    let shutdown = match runtime.block_on(async { shutdown_signal() }) {
        Ok(shutdown) => shutdown,
        Err(e) => {
            eprintln!("redlockd: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    // `dev` binds its own ports, then starts its masters (their ports are
    // part of the config): a master choosing a free port could otherwise
    // take the one chosen for the daemon a moment before.
    let early = match cli.command {
        Some(Command::Dev { nodes }) => match stand_in_config(cli.config.as_deref(), nodes).map(|c| bind(&c)) {
            Some(Ok(listeners)) => Some(listeners),
            Some(Err(e)) => {
                eprintln!("redlockd dev: {e:#}");
                return ExitCode::FAILURE;
            }
            None => None,
        },
        _ => None,
    };
    let (masters, node_urls) = match cli.command {
        Some(Command::Dev { nodes }) => match redlockd::dev::start_masters(nodes) {
            Ok(masters) => {
                let urls: Vec<String> = masters.iter().map(|m| m.url()).collect();
                (masters, Some(urls.join(",")))
            }
            Err(e) => {
                eprintln!("redlockd dev: {e}");
                return ExitCode::FAILURE;
            }
        },
        _ => (Vec::new(), None),
    };
    let mut env: HashMap<String, String> = std::env::vars().collect();
    if let Some(urls) = node_urls {
        env.insert("REDLOCKD__REDIS__NODES".into(), urls);
        // Fresh masters would sit in quarantine for lock.max_ttl.
        env.entry("REDLOCKD__SAFETY__QUARANTINE".into())
            .or_insert_with(|| "false".into());
    }
    let config = match Config::load(cli.config.as_deref(), Some(env)) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("redlockd: invalid configuration: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let prepared = match redlockd::app::prepare(config) {
        Ok(prepared) => prepared,
        Err(e) => {
            eprintln!("redlockd: invalid configuration: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    // Within the runtime: the trace exporter's channel lives on it.
    let traces = match runtime.block_on(async { redlockd::app::init_logging(prepared.config()) }) {
        Ok(traces) => traces,
        Err(e) => {
            eprintln!("redlockd: invalid configuration: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    if !masters.is_empty() {
        tracing::info!(nodes = ?prepared.config().redis.nodes, "dev: started local redis-server masters");
    }
    tracing::debug!(workers, "runtime threads");
    let listeners = match early.map_or_else(|| bind(prepared.config()), Ok) {
        Ok(listeners) => listeners,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("redlockd: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(serve(prepared, listeners, shutdown));
    // The spans still queued go out while the runtime still runs.
    if let Some(traces) = traces {
        traces.shutdown();
    }
    // The daemon's Redis clients live in the runtime's tasks, and outlive
    // `serve`: stopped only with the runtime, they would see `dev`'s masters
    // go and log each connection closing. The clients stop first, then the
    // masters, and a clean stop stays quiet.
    runtime.shutdown_timeout(RUNTIME_STOP);
    drop(masters);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("redlockd: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The configuration `dev` will run with, as far as it is known before its
/// masters start: the same file and environment, with stand-ins for the
/// `nodes` masters. `None` when it is invalid: loading the whole one says why.
fn stand_in_config(file: Option<&std::path::Path>, nodes: usize) -> Option<Config> {
    let mut env: HashMap<String, String> = std::env::vars().collect();
    let stand_ins: Vec<String> = (1..=nodes).map(|port| format!("redis://127.0.0.1:{port}")).collect();
    env.insert("REDLOCKD__REDIS__NODES".into(), stand_ins.join(","));
    Config::load(file, Some(env)).ok()
}

/// The gRPC and metrics listeners of `config`.
fn bind(config: &Config) -> anyhow::Result<[std::net::TcpListener; 2]> {
    let bind = |addr, setting: &'static str| {
        std::net::TcpListener::bind(addr).with_context(|| format!("binding {setting} = {addr}"))
    };
    Ok([
        bind(config.server.listen, "server.listen")?,
        bind(config.metrics.listen, "metrics.listen")?,
    ])
}

async fn serve(
    prepared: redlockd::app::Prepared,
    [grpc, metrics]: [std::net::TcpListener; 2],
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let adopt = |listener: std::net::TcpListener| {
        listener.set_nonblocking(true)?;
        tokio::net::TcpListener::from_std(listener)
    };
    let listeners = redlockd::app::Listeners {
        grpc: adopt(grpc).context("server.listen")?,
        metrics: adopt(metrics).context("metrics.listen")?,
    };
    let metrics = std::sync::Arc::new(redlockd::telemetry::metrics::Metrics::new());
    redlockd::app::run(prepared, listeners, metrics, shutdown).await?;
    Ok(())
}

/// Resolves on SIGTERM (Kubernetes) or SIGINT (Ctrl-C).
///
/// The handlers are installed at once, not when the future is first polled:
/// a SIGTERM during start-up must still shut down cleanly (`redlockd dev`
/// stops its masters) instead of killing the process.
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
            _ = int.recv() => tracing::info!("SIGINT: shutting down"),
        }
    })
}
