//! `redlockctl`: a command-line client for redlockd's gRPC API.
//!
//! Prints `key=value` lines on success (`output.rs`). Exit codes: 0 done; 1
//! not acquired, not extended or not released; 2 a gRPC error (message on
//! stderr). `run` and `elect` have their own (see `run.rs`, `elect.rs`;
//! their command is supervised by `supervise.rs`), as do `leader`,
//! `observe` and `watch` (`views.rs`). `locks ls` is in `admin.rs`; the
//! connection, TLS and bearer token in `connect.rs`.
#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use redlockd_client::proto::{
    AcquireManyRequest, AcquireRequest, ExtendRequest, ForceReleaseRequest, InspectRequest, LockMode, ReleaseRequest,
};
use redlockd_client::wire_duration as wire;

use crate::admin::{holder_fields, millis};

/// Take, extend and release locks, and run elections, through a redlockd daemon.
#[derive(Parser)]
#[command(name = "redlockctl", version, about)]
struct Cli {
    /// The daemon's gRPC address (https://… for a daemon with TLS).
    #[arg(long, env = "REDLOCKD_ADDR", default_value = "http://127.0.0.1:7420")]
    addr: String,
    #[command(flatten)]
    connection: connect::Options,
    #[command(subcommand)]
    command: Command,
}

/// How to take a lock (Acquire and Run).
#[derive(clap::Args)]
struct LockArgs {
    /// Time to live (e.g. 10s, 500ms); a session renews it at about a third.
    #[arg(long, value_parser = humantime::parse_duration)]
    ttl: Option<Duration>,
    /// How long to wait for a held lock (0 = one attempt).
    #[arg(long, value_parser = humantime::parse_duration, default_value = "0s")]
    wait: Duration,
    /// A label for logs (pod name, job id).
    #[arg(long, default_value = "")]
    owner: String,
    /// Hold it shared with other shared holders (a reader), not exclusively.
    #[arg(long)]
    shared: bool,
    /// Take one of N permits of a semaphore (2 to the daemon's lock.max_permits).
    #[arg(long, default_value_t = 0)]
    permits: u32,
    /// Take the lock again, with the same value and token, while this daemon
    /// holds it for another acquisition with this key (a job or trace id).
    #[arg(long, default_value = "", env = "REDLOCKD_REENTRANCY_KEY", hide_env_values = true)]
    reentrancy_key: String,
    /// If the holder dies without releasing, the lock stays taken this much
    /// longer (for resources that cannot check fencing tokens).
    #[arg(long, value_parser = humantime::parse_duration)]
    lock_delay: Option<Duration>,
}

impl LockArgs {
    fn mode(&self) -> LockMode {
        if self.shared {
            LockMode::Shared
        } else {
            LockMode::Exclusive
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Acquire a lock; prints resource, value, fencing_token, validity_ms
    /// (and mode=shared for a shared one, permits and slot for a permit).
    Acquire {
        /// The resource to lock; several are taken all or none (AcquireMany),
        /// printing value, validity_ms and a `lease:` line per member.
        #[arg(required = true, num_args = 1..=16)]
        resources: Vec<String>,
        #[command(flatten)]
        lock: LockArgs,
    },
    /// Reset the TTL of a held lock; prints validity_ms.
    Extend {
        /// The locked resource.
        resource: String,
        /// The value Acquire printed.
        value: String,
        /// The new time to live.
        #[arg(long, value_parser = humantime::parse_duration)]
        ttl: Option<Duration>,
    },
    /// Release a lock.
    Release {
        /// The locked resource.
        resource: String,
        /// The value Acquire printed.
        value: String,
    },
    /// Show what the masters hold for a resource (never lock values);
    /// prints held, agreeing/quorum and a line per master.
    Inspect {
        /// The resource to look at.
        resource: String,
    },
    /// List or inspect locks (the `admin` scope): `redlockctl locks ls`.
    Locks {
        #[command(subcommand)]
        command: LocksCommand,
    },
    /// Take a stuck lock away on every master (the `admin` scope), never
    /// lowering its fencing token: the next holder's token is larger.
    /// Prints masters_held.
    ForceRelease {
        /// The locked resource.
        resource: String,
        /// Why, for the audit log (1 to 256 bytes).
        #[arg(long)]
        reason: String,
    },
    /// Hold a lock while a command runs; the command gets the token in
    /// REDLOCKD_FENCING_TOKEN and is stopped if the lock is lost. Exits with
    /// the command's code; 1 not acquired; 2 error; 3 lock lost.
    Run {
        /// The resource to lock.
        #[arg(long)]
        resource: String,
        #[command(flatten)]
        lock: LockArgs,
        /// After SIGTERM, how long the command gets before SIGKILL.
        #[arg(long, value_parser = humantime::parse_duration, default_value = "10s")]
        grace: Duration,
        /// The command and its arguments (after `--`).
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Campaign for an election and run a command while leading; the
    /// command gets the term in REDLOCKD_TERM and is stopped if the
    /// leadership is lost. Exits with the command's code; 1 not elected
    /// within --wait; 2 error; 3 leadership lost.
    Elect(elect::ElectArgs),
    /// Who leads an election: elected, candidate, term, value, since_ms.
    /// Exits 1 when nobody leads.
    Leader(views::LeaderArgs),
    /// Follow an election: a line for the state now, then one per change.
    Observe(views::ObserveArgs),
    /// Follow who holds a lock: a line for the holder now (event=current),
    /// then one per change (acquired, released, expired, force_released,
    /// changed).
    Watch(views::WatchArgs),
}

/// `redlockctl locks …`
#[derive(Subcommand)]
enum LocksCommand {
    /// List the locks held under a prefix, one line each: resource, owner,
    /// tenant, daemon, since, fencing_token, ttl_ms.
    Ls {
        /// The resources to list start with this.
        #[arg(long)]
        prefix: String,
        /// Locks per request to the daemon (1 to 1000); every page is listed.
        #[arg(long, default_value_t = 500)]
        page_size: u32,
    },
}

// First: its `out!` and `say!` are used in the modules after it.
#[macro_use]
mod output;
mod admin;
mod connect;
mod elect;
mod run;
mod supervise;
mod views;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let supervising = matches!(cli.command, Command::Run { .. } | Command::Elect(_));
    // Before anything runs or connects: a SIGTERM that comes while
    // redlockctl waits for the lock must not kill it (as PID 1 it would be
    // ignored), nor leave a command behind (supervise.rs).
    let signals = if supervising {
        match supervise::Signals::install() {
            Ok(signals) => Some(signals),
            Err(error) => {
                say!("cannot set up signal handling: {error}");
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };
    let connected = || async {
        connect::connect(&cli.addr, &cli.connection).await.map_err(|error| {
            say!("{error}");
            ExitCode::from(2)
        })
    };
    match cli.command {
        Command::Elect(args) => {
            let signals = signals.expect("installed for elect");
            return run_with(connected().await, |c| elect::elect(c, args, signals)).await;
        }
        Command::Leader(args) => return run_with(connected().await, |c| views::leader(c, args)).await,
        Command::Observe(args) => return run_with(connected().await, |c| views::observe(c, args)).await,
        Command::Watch(args) => return run_with(connected().await, |c| views::watch(c, args)).await,
        _ => {}
    }
    if let Command::Run {
        resource,
        lock:
            LockArgs {
                ttl,
                wait,
                owner,
                shared,
                permits,
                reentrancy_key,
                lock_delay,
            },
        grace,
        command,
    } = cli.command
    {
        let job = run::Job {
            resource,
            ttl,
            wait,
            owner,
            shared,
            permits,
            reentrancy_key,
            lock_delay,
            grace,
            command,
        };
        let signals = signals.expect("installed for run");
        return run_with(connected().await, |c| run::run(c, job, signals)).await;
    }
    match call(cli).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(status) => {
            say!("{status}");
            ExitCode::from(2)
        }
    }
}

/// Runs a command that has its own exit codes, once connected.
async fn run_with<F: Future<Output = ExitCode>>(
    client: Result<redlockd_client::Client, ExitCode>,
    command: impl FnOnce(redlockd_client::Client) -> F,
) -> ExitCode {
    match client {
        Ok(client) => command(client).await,
        Err(code) => code,
    }
}

/// Why a command of `call` failed: redlockctl's last word to its user,
/// on stderr with exit code 2.
#[derive(Debug, thiserror::Error)]
enum CallError {
    /// The daemon could not be reached.
    #[error(transparent)]
    Connect(#[from] connect::ConnectError),
    /// The daemon refused the call.
    #[error("{code:?}: {message}")]
    Refused {
        /// Its gRPC code.
        code: tonic::Code,
        /// Its message.
        message: String,
    },
    /// `acquire` of several resources with options only one takes.
    #[error("several resources take neither --shared, --permits, --reentrancy-key nor --lock-delay")]
    OptionsForOne,
}

impl From<tonic::Status> for CallError {
    fn from(status: tonic::Status) -> CallError {
        CallError::Refused {
            code: status.code(),
            message: status.message().to_owned(),
        }
    }
}

async fn call(cli: Cli) -> Result<bool, CallError> {
    let connection = connect::connect(&cli.addr, &cli.connection).await?;
    let mut client = connection.stub();
    match cli.command {
        Command::Locks {
            command: LocksCommand::Ls { prefix, page_size },
        } => admin::list_locks(&connection, prefix, page_size).await,
        Command::ForceRelease { resource, reason } => {
            let reply = connection
                .admin()
                .force_release(ForceReleaseRequest { resource, reason })
                .await?
                .into_inner();
            out!("masters_held={}", reply.masters_held);
            Ok(true)
        }
        Command::Acquire { resources, lock } if resources.len() > 1 => {
            if lock.shared || lock.permits > 0 || !lock.reentrancy_key.is_empty() || lock.lock_delay.is_some() {
                return Err(CallError::OptionsForOne);
            }
            let request = AcquireManyRequest {
                resources,
                ttl: lock.ttl.map(wire),
                wait: Some(wire(lock.wait)),
                owner: lock.owner,
            };
            let reply = client.acquire_many(request).await?.into_inner();
            let Some(first) = reply.leases.first().filter(|_| reply.acquired) else {
                out!("acquired=false reason={:?} attempts={}", reply.reason(), reply.attempts);
                return Ok(false);
            };
            out!("value={}", first.value);
            out!("validity_ms={}", millis(first.validity));
            for lease in &reply.leases {
                out!(
                    "lease: resource={} fencing_token={}",
                    lease.resource,
                    lease.fencing_token
                );
            }
            Ok(true)
        }
        Command::Acquire { mut resources, lock } => {
            let resource = resources.remove(0);
            let request = AcquireRequest {
                resource,
                ttl: lock.ttl.map(wire),
                wait: Some(wire(lock.wait)),
                mode: lock.mode().into(),
                permits: lock.permits,
                reentrancy_key: lock.reentrancy_key,
                owner: lock.owner,
                lock_delay: lock.lock_delay.map(wire),
            };
            let reply = client.acquire(request).await?.into_inner();
            match reply.lease {
                Some(lease) if reply.acquired => {
                    out!("resource={}", lease.resource);
                    out!("value={}", lease.value);
                    out!("fencing_token={}", lease.fencing_token);
                    out!("validity_ms={}", millis(lease.validity));
                    if lease.mode() == LockMode::Shared {
                        out!("mode=shared");
                    }
                    if lease.permits > 0 {
                        out!("permits={}", lease.permits);
                        out!("slot={}", lease.slot);
                    }
                    Ok(true)
                }
                _ => {
                    out!("acquired=false reason={:?} attempts={}", reply.reason(), reply.attempts);
                    Ok(false)
                }
            }
        }
        Command::Extend { resource, value, ttl } => {
            let request = ExtendRequest {
                resource,
                value,
                ttl: ttl.map(wire),
            };
            let reply = client.extend(request).await?.into_inner();
            out!("extended={} validity_ms={}", reply.extended, millis(reply.validity));
            Ok(reply.extended)
        }
        Command::Release { resource, value } => {
            let reply = client.release(ReleaseRequest { resource, value }).await?.into_inner();
            out!("released={}", reply.released);
            Ok(reply.released)
        }
        Command::Inspect { resource } => {
            let reply = client.inspect(InspectRequest { resource }).await?.into_inner();
            out!(
                "held={} agreeing={} quorum={} waiting={} readers={}",
                reply.held,
                reply.agreeing,
                reply.quorum,
                reply.waiting,
                reply.readers
            );
            if reply.permits > 0 {
                out!("permits={} permits_out={}", reply.permits, reply.permits_out);
            }
            if let Some(holder) = &reply.holder {
                out!("holder: {}", holder_fields(holder));
            }
            for owner in &reply.waiter_owners {
                out!("waiter: owner={owner:?}");
            }
            for node in reply.nodes {
                let ttl_ms = node
                    .ttl
                    .and_then(|t| Duration::try_from(t).ok())
                    .map_or(0, |t| t.as_millis());
                out!(
                    "node={} address={} reachable={} state={} held={} with_majority={} ttl_ms={} fence_counter={}",
                    node.index,
                    node.address,
                    node.reachable,
                    node.state,
                    node.held,
                    node.with_majority,
                    ttl_ms,
                    node.fence_counter
                );
            }
            Ok(true)
        }
        Command::Run { .. } | Command::Elect(_) | Command::Leader(_) | Command::Observe(_) | Command::Watch(_) => {
            unreachable!("handled in main")
        }
    }
}
