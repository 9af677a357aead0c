//! The fault-suite rig: five real masters, daemons that each reach every
//! master through their own fault proxy, and clients that record every
//! operation in a `History` and write to a fenced store under the lock.

use std::collections::HashMap;
use std::time::Duration;

use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{AcquireRequest, LockMode, ReleaseRequest};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tonic::transport::Channel;

use super::history::{FencedStore, Grant, History, Kind, Options, Reply, Report, UnfencedStore, check};
use super::proxy::{Mode, Proxy};
use super::{Cluster, Daemon, secs, test_env};

/// The lock TTL the clients ask for.
pub const TTL: Duration = Duration::from_secs(1);
/// `lock.max_ttl`: how long quarantine holds a master out.
pub const MAX_TTL: Duration = Duration::from_secs(2);
/// How long a client waits for a lock before trying again.
pub const WAIT: Duration = Duration::from_secs(1);
/// After faults heal, a grant must come within this (TTL + retry budget),
/// plus what the warm-up took past `MAX_TTL` (`Rig::liveness`, rig_liveness.rs).
pub const LIVENESS: Duration = Duration::from_secs(5);

/// Masters, daemons, proxies between them, and what the clients did.
pub struct Rig {
    pub cluster: Cluster,
    /// `proxies[d][n]` carries daemon `d`'s traffic to master `n`.
    pub proxies: Vec<Vec<Proxy>>,
    pub daemons: Vec<Daemon>,
    pub history: History,
    pub fenced: FencedStore,
    pub unfenced: UnfencedStore,
    /// How long the daemons took to grant their first lock on the fresh,
    /// quarantined masters: the same probes, hold and repair that let
    /// masters back after a restart, timed on this machine as it is now.
    pub warm_up: Duration,
}

/// The settings every rig daemon gets, plus `extra`.
pub fn rig_env(cluster: &Cluster, proxies: &[Proxy], extra: &[(&str, &str)]) -> HashMap<String, String> {
    let mut env = test_env(cluster);
    let urls: Vec<String> = proxies.iter().map(Proxy::url).collect();
    env.insert("REDLOCKD__REDIS__NODES".into(), urls.join(","));
    for (k, v) in [
        ("REDLOCKD__SAFETY__QUARANTINE", "true"),
        ("REDLOCKD__SAFETY__CHECK_INTERVAL", "100ms"),
        ("REDLOCKD__LOCK__MAX_TTL", "2s"),
        ("REDLOCKD__LOCK__DEFAULT_TTL", "1s"),
        // Reconnect quickly after a master comes back.
        ("REDLOCKD__REDIS__RECONNECT_MAX_DELAY", "200ms"),
    ]
    .iter()
    .chain(extra)
    {
        env.insert((*k).into(), (*v).into());
    }
    env
}

impl Rig {
    /// Five masters and `daemons` daemons with quarantine on (unless `extra`
    /// says otherwise); returns once a lock can be taken.
    pub async fn start(daemons: usize, extra: &[(&str, &str)]) -> Rig {
        let cluster = Cluster::start(5);
        let mut proxies = Vec::new();
        let mut started = Vec::new();
        for _ in 0..daemons {
            let mut line = Vec::new();
            for master in &cluster.masters {
                line.push(Proxy::start(([127, 0, 0, 1], master.port()).into()).await);
            }
            started.push(Daemon::start_with(rig_env(&cluster, &line, extra)).await);
            proxies.push(line);
        }
        Rig::over(cluster, proxies, started).await
    }

    /// A rig of daemons already started (on `cluster` through `proxies`,
    /// or on anything else with both empty); returns once each daemon
    /// granted a lock.
    pub async fn over(cluster: Cluster, proxies: Vec<Vec<Proxy>>, daemons: Vec<Daemon>) -> Rig {
        let mut rig = Rig {
            cluster,
            proxies,
            daemons,
            history: History::new(),
            fenced: FencedStore::new("fenced"),
            unfenced: UnfencedStore::new("unfenced"),
            warm_up: Duration::ZERO,
        };
        // A fresh cluster is quarantined for MAX_TTL: wait for the first grant.
        let start = Instant::now();
        for daemon in &rig.daemons {
            let mut client = daemon.client().await;
            let reply = acquire(&mut client, "warmup", ((false, 0, ""), TTL), MAX_TTL * 8)
                .await
                .expect("warm-up acquire failed");
            let lease = reply.expect("no grant within the warm-up wait");
            release(&mut client, "warmup", &lease.value).await.ok();
        }
        rig.warm_up = start.elapsed();
        rig
    }

    /// Sets the link from every daemon to master `node`.
    pub fn link(&self, node: usize, mode: Mode) {
        for line in &self.proxies {
            line[node].set_mode(mode);
        }
    }

    /// Sets the link from daemon `daemon` to each of `nodes`.
    pub fn links(&self, daemon: usize, nodes: &[usize], mode: Mode) {
        for n in nodes {
            self.proxies[daemon][*n].set_mode(mode);
        }
    }

    /// Every link back to `Pass`.
    pub fn heal_links(&self) {
        for line in &self.proxies {
            for proxy in line {
                proxy.set_mode(Mode::Pass);
            }
        }
    }

    /// A client of daemon `d`, recording as `name`.
    pub async fn client(&self, d: usize, name: &str) -> Client {
        Client {
            name: name.to_owned(),
            rpc: self.daemons[d].client().await,
            shared: false,
            permits: 0,
            set_with: None,
            reentrancy_key: String::new(),
            history: self.history.clone(),
            fenced: self.fenced.clone(),
        }
    }

    /// `n` clients, spread over the daemons, contending for `resource`
    /// until `run_for` has passed: acquire, write to the fenced store while
    /// the lease is valid, hold briefly, release.
    pub async fn workload(&self, n: usize, resource: &str, run_for: Duration) -> JoinHandle<()> {
        self.mixed_workload(n, 0, resource, run_for).await
    }

    /// `workload` with `writers` exclusive clients and `readers` shared ones (readers write to no store).
    pub async fn mixed_workload(
        &self,
        writers: usize,
        readers: usize,
        resource: &str,
        run_for: Duration,
    ) -> JoinHandle<()> {
        let kinds: Vec<(bool, u32)> = (0..writers + readers).map(|i| (i >= writers, 0)).collect();
        self.workload_of(&kinds, resource, run_for).await
    }

    /// `workload` with one client per `(shared, permits)` (permit holders write to no store either).
    pub async fn workload_of(&self, kinds: &[(bool, u32)], resource: &str, run_for: Duration) -> JoinHandle<()> {
        let (_, running) = watch::channel(true);
        self.spawn_workload(kinds, resource, (Instant::now() + run_for, running))
            .await
    }

    pub(super) async fn spawn_workload(
        &self,
        kinds: &[(bool, u32)],
        resource: &str,
        (until, running): (Instant, watch::Receiver<bool>),
    ) -> JoinHandle<()> {
        let mut clients = Vec::new();
        for (i, (shared, permits)) in kinds.iter().enumerate() {
            let mut client = self.client(i % self.daemons.len(), &format!("c{i}")).await;
            (client.shared, client.permits) = (*shared, *permits);
            clients.push(client);
        }
        let resource = resource.to_owned();
        tokio::spawn(async move {
            let runs = clients.into_iter().map(|mut c| {
                let (resource, running) = (resource.clone(), running.clone());
                async move {
                    while Instant::now() < until && *running.borrow() {
                        c.cycle(&resource, Duration::from_millis(30)).await;
                    }
                }
            });
            futures::future::join_all(runs).await;
        })
    }

    /// Checks the history and both stores; `healed_at` adds a liveness check.
    pub fn check(&self, resource: &str, healed_at: Option<Instant>) -> Report {
        let drift = TTL.mul_f64(0.01) + Duration::from_millis(2);
        let mut options = Options {
            drift_margin: drift,
            ..Options::default()
        };
        if let Some(at) = healed_at {
            options = options.liveness(resource, at, self.liveness());
        }
        let report = check(&self.history, &[&self.fenced, &self.unfenced], options);
        println!("{resource}: {}", report.stats);
        report
    }
}

/// One recording client.
pub struct Client {
    pub name: String,
    pub rpc: LockClient<Channel>,
    /// Takes shared locks (a reader).
    pub shared: bool,
    /// Takes permits of a semaphore of this many (0: locks).
    pub permits: u32,
    /// Takes the resource together with this one, as a set (`rig_sets.rs`).
    pub set_with: Option<String>,
    /// Acquires under this reentrancy key.
    pub reentrancy_key: String,
    pub(super) history: History,
    pub(super) fenced: FencedStore,
}

/// The lease a client holds.
pub struct Held {
    pub token: u64,
    pub value: String,
    pub sent: Instant,
    pub validity: Duration,
}

impl Client {
    /// Acquire with the rig's TTL (recorded); `None` when not granted.
    pub async fn acquire(&mut self, resource: &str, wait: Duration) -> Option<Held> {
        self.acquire_ttl(resource, TTL, wait).await
    }

    /// Acquire with `ttl` (recorded); `None` when not granted.
    pub async fn acquire_ttl(&mut self, resource: &str, ttl: Duration, wait: Duration) -> Option<Held> {
        let op = self.history.invoke(&self.name, resource, Kind::Acquire);
        let sent = Instant::now();
        let asked = (self.shared, self.permits, self.reentrancy_key.as_str());
        match acquire(&mut self.rpc, resource, (asked, ttl), wait).await {
            Ok(Some(lease)) => {
                let validity = lease.validity.and_then(|v| v.try_into().ok()).unwrap_or_default();
                let grant = Grant {
                    token: lease.fencing_token,
                    validity,
                    value: lease.value.clone(),
                    shared: lease.mode() == LockMode::Shared,
                    permits: lease.permits,
                    slot: lease.slot,
                };
                self.history.complete(op, Reply::Granted(grant));
                Some(Held {
                    token: lease.fencing_token,
                    value: lease.value,
                    sent,
                    validity,
                })
            }
            Ok(None) => {
                self.history.complete(op, Reply::Fail);
                None
            }
            Err(_) => {
                self.history.complete(op, Reply::Unknown);
                // UNAVAILABLE comes back at once: do not spin.
                tokio::time::sleep(Duration::from_millis(50)).await;
                None
            }
        }
    }

    /// Writes to the fenced store if the lease is still valid by the client
    /// rule (validity counted from the send time). Returns whether accepted.
    pub fn write_fenced(&self, held: &Held, payload: &str) -> bool {
        held.sent.elapsed() < held.validity && self.fenced.write(&self.name, held.token, payload).is_ok()
    }

    /// Release (recorded).
    pub async fn release(&mut self, resource: &str, held: &Held) {
        let op = self
            .history
            .invoke(&self.name, resource, Kind::Release(held.value.clone()));
        let reply = match release(&mut self.rpc, resource, &held.value).await {
            Ok(true) => Reply::Released,
            Ok(false) => Reply::Fail,
            Err(_) => Reply::Unknown,
        };
        self.history.complete(op, reply);
    }

    /// One acquire, write, hold, release.
    pub async fn cycle(&mut self, resource: &str, hold: Duration) {
        if let Some(other) = self.set_with.clone() {
            return self.set_cycle(resource, &other, hold).await;
        }
        if let Some(held) = self.acquire(resource, WAIT).await {
            if !self.shared && self.permits == 0 {
                self.write_fenced(&held, &format!("{}:{}", self.name, held.token));
            }
            tokio::time::sleep(hold).await;
            self.release(resource, &held).await;
        }
    }
}

/// Acquire with a gRPC deadline a little past the wait.
async fn acquire(
    rpc: &mut LockClient<Channel>,
    resource: &str,
    ((shared, permits, reentrancy_key), ttl): ((bool, u32, &str), Duration),
    wait: Duration,
) -> Result<Option<redlockd_client::proto::Lease>, tonic::Status> {
    let mode = if shared { LockMode::Shared } else { LockMode::Exclusive };
    let mut request = tonic::Request::new(AcquireRequest {
        resource: resource.into(),
        ttl: secs(ttl.as_secs_f64()),
        wait: secs(wait.as_secs_f64()),
        owner: String::new(),
        mode: mode.into(),
        permits,
        reentrancy_key: reentrancy_key.to_owned(),
        lock_delay: None,
    });
    request.set_timeout(wait + Duration::from_secs(2));
    let reply = rpc.acquire(request).await?.into_inner();
    Ok(reply.lease.filter(|_| reply.acquired))
}

async fn release(rpc: &mut LockClient<Channel>, resource: &str, value: &str) -> Result<bool, tonic::Status> {
    let mut request = tonic::Request::new(ReleaseRequest {
        resource: resource.into(),
        value: value.into(),
    });
    request.set_timeout(Duration::from_secs(2));
    Ok(rpc.release(request).await?.into_inner().released)
}

impl Rig {
    /// A recording client of any daemon at `addr`.
    pub async fn client_at(&self, addr: std::net::SocketAddr, name: &str) -> Client {
        let rpc = LockClient::connect(format!("http://{addr}"))
            .await
            .expect("connecting to a daemon");
        Client {
            name: name.to_owned(),
            rpc,
            shared: false,
            permits: 0,
            set_with: None,
            reentrancy_key: String::new(),
            history: self.history.clone(),
            fenced: self.fenced.clone(),
        }
    }
}

/// The real `redlockd` binary as a child process, for kill -9.
pub struct BinaryDaemon {
    pub addr: std::net::SocketAddr,
    child: std::process::Child,
}

impl BinaryDaemon {
    /// Starts it with `env` (and a free port) and waits until it serves.
    pub async fn start(mut env: HashMap<String, String>) -> BinaryDaemon {
        let port = redlockd::dev::free_port().unwrap();
        env.insert("REDLOCKD__SERVER__LISTEN".into(), format!("127.0.0.1:{port}"));
        env.insert("REDLOCKD__METRICS__LISTEN".into(), "127.0.0.1:0".into());
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_redlockd"))
            .env_clear()
            .envs(env)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("starting redlockd");
        let addr = ([127, 0, 0, 1], port).into();
        let start = Instant::now();
        while LockClient::connect(format!("http://{addr}")).await.is_err() {
            assert!(start.elapsed() < Duration::from_secs(20), "redlockd did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        BinaryDaemon { addr, child }
    }

    /// SIGTERM, then waits (at most `limit`) for the exit status.
    pub async fn terminate(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let pid = self.child.id().to_string();
        let _ = std::process::Command::new("kill").args(["-TERM", &pid]).status();
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        None
    }

    /// SIGSTOP: the daemon freezes; its connections stay open, unanswered.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT after `pause`.
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status();
        assert!(status.is_ok_and(|s| s.success()), "kill {signal} redlockd");
    }

    /// SIGKILL: nothing is released, nothing drains.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for BinaryDaemon {
    fn drop(&mut self) {
        self.kill();
    }
}
