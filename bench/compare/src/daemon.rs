//! redlockd as a separate process (the release binary, started here on free
//! loopback ports against the benchmark's masters), its gRPC client for
//! workloads (a)-(c), and workload (d): many open `Hold` sessions.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use futures::StreamExt;
use redlockd_client::Pipeline;
use redlockd_client::proto::hold_request::Request as Ask;
use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{AcquireRequest, HoldEvent, HoldRequest, HoldStart, ReleaseRequest};
use tokio::sync::{mpsc, watch};
use tonic::transport::{Channel, Endpoint};

use crate::drive::Locker;
use crate::measure::{self, CpuSnapshot, Watched};

/// The lease TTL of workloads (a)-(c): far longer than any cycle.
const TTL: Duration = Duration::from_secs(10);
/// How long a contended Acquire waits in the daemon before answering "not acquired".
const WAIT: Duration = Duration::from_secs(10);
/// How long the daemon may take to serve.
const START_LIMIT: Duration = Duration::from_secs(30);
/// Sessions of (d) being opened at once.
const OPENING_AT_ONCE: usize = 64;
/// Tries per session of (d) before it counts as failed to open.
const OPEN_ATTEMPTS: u32 = 5;

/// A running redlockd; stopped (SIGTERM, then SIGKILL) on drop.
pub struct Daemon {
    child: Option<Child>,
    pub addr: String,
    pub metrics_addr: String,
    dir: tempfile::TempDir,
}

impl Daemon {
    /// Starts `binary --config <file>` against `nodes` and waits until its
    /// health service answers SERVING.
    pub async fn start(binary: &Path, nodes: &[String], max_sessions: usize) -> anyhow::Result<Daemon> {
        Daemon::start_with(binary, nodes, max_sessions, "").await
    }

    /// `start`, with `extra` appended to its configuration file (TOML sections).
    pub async fn start_with(
        binary: &Path,
        nodes: &[String],
        max_sessions: usize,
        extra: &str,
    ) -> anyhow::Result<Daemon> {
        if !binary.is_file() {
            bail!(
                "{} not found: build it first (`cargo build --release --bin redlockd`; scripts/bench does)",
                binary.display()
            );
        }
        let dir = tempfile::Builder::new().prefix("redlockd-bench-").tempdir()?;
        let listen = format!("127.0.0.1:{}", redlockd::dev::free_port()?);
        let metrics = format!("127.0.0.1:{}", redlockd::dev::free_port()?);
        let nodes = nodes.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ");
        // A fresh cluster: without quarantine off, the first lock waits lock.max_ttl.
        let config = format!(
            "[server]\nlisten = \"{listen}\"\n\n[metrics]\nlisten = \"{metrics}\"\n\n[log]\nfilter = \"{}\"\n\n\
             [redis]\nnodes = [{nodes}]\n\n[lock]\nmax_sessions = {}\n\n[safety]\nquarantine = false\n",
            std::env::var("BENCH_LOG_FILTER").unwrap_or_else(|_| "warn".into()),
            max_sessions.max(10_000)
        );
        let config_path = dir.path().join("redlockd.toml");
        std::fs::write(&config_path, config + extra)?;
        let log = std::fs::File::create(dir.path().join("redlockd.log"))?;
        let child = Command::new(binary)
            .arg("--config")
            .arg(&config_path)
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut daemon = Daemon {
            child: Some(child),
            addr: format!("http://{listen}"),
            metrics_addr: metrics,
            dir,
        };
        daemon.wait_serving().await?;
        Ok(daemon)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The daemon's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("redlockd.log")).unwrap_or_default()
    }

    async fn wait_serving(&mut self) -> anyhow::Result<()> {
        use tonic_health::pb::HealthCheckRequest;
        use tonic_health::pb::health_check_response::ServingStatus;
        use tonic_health::pb::health_client::HealthClient;
        let started = Instant::now();
        let mut last = String::from("not started");
        while started.elapsed() < START_LIMIT {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                bail!("redlockd exited with {status}:\n{}", self.log());
            }
            match Endpoint::from_shared(self.addr.clone())?.connect().await {
                Ok(channel) => {
                    let reply = HealthClient::new(channel)
                        .check(HealthCheckRequest { service: String::new() })
                        .await;
                    match reply {
                        Ok(r) if r.get_ref().status() == ServingStatus::Serving => return Ok(()),
                        Ok(r) => last = format!("health: {:?}", r.get_ref().status()),
                        Err(e) => last = format!("health: {e}"),
                    }
                }
                Err(e) => last = e.to_string(),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!(
            "redlockd did not serve within {START_LIMIT:?} ({last}):\n{}",
            self.log()
        )
    }

    /// Opens `n` HTTP/2 connections.
    pub async fn channels(&self, n: usize) -> anyhow::Result<Vec<Channel>> {
        let mut channels = Vec::with_capacity(n);
        for _ in 0..n {
            let channel = Endpoint::from_shared(self.addr.clone())?
                .tcp_nodelay(true)
                .connect()
                .await
                .context("connecting to redlockd")?;
            channels.push(channel);
        }
        Ok(channels)
    }

    /// `sum` of the daemon's `/metrics` series whose line starts with `prefix`.
    pub fn metric(&self, prefix: &str) -> Option<f64> {
        let mut stream = TcpStream::connect(&self.metrics_addr).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(
            stream,
            "GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n"
        )
        .ok()?;
        let mut body = String::new();
        stream.read_to_string(&mut body).ok()?;
        let values: Vec<f64> = body
            .lines()
            .filter(|l| l.starts_with(prefix))
            .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
            .collect();
        (!values.is_empty()).then(|| values.iter().sum())
    }

    /// SIGTERM, then waits (SIGKILL after 15 s).
    pub fn stop(&mut self) {
        if let Some(child) = self.child.take() {
            terminate(child, Duration::from_secs(15));
        }
    }
}

/// SIGTERM to a server the benchmark started (redlockd, etcd, ZooKeeper),
/// then waits for it, and SIGKILL once `grace` has passed.
pub fn terminate(mut child: Child, grace: Duration) {
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let started = Instant::now();
    while started.elapsed() < grace {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The gRPC hop alone, for (a): one client's closed loop of
/// `grpc.health.v1.Health/Check` on `channel`, which the daemon answers
/// without asking any master, for `window` after `warmup`. Its latency is
/// what an acquisition pays before any master is asked.
pub async fn hop(channel: Channel, warmup: Duration, window: Duration) -> anyhow::Result<measure::Samples> {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_client::HealthClient;
    let mut client = HealthClient::new(channel);
    let mut samples = measure::Samples::default();
    let start = Instant::now();
    while start.elapsed() < warmup + window {
        let asked = Instant::now();
        client
            .check(HealthCheckRequest { service: String::new() })
            .await
            .context("Health/Check")?;
        if asked >= start + warmup {
            samples.push(asked.elapsed());
        }
    }
    samples.sort();
    Ok(samples)
}

/// One client of the daemon, on a (shared) channel: unary calls, or calls
/// on a `Pipeline` stream shared by every client of the channel.
#[derive(Clone)]
pub enum GrpcLocker {
    Unary(LockClient<Channel>),
    Pipeline(Pipeline),
}

impl GrpcLocker {
    pub fn unary(channel: Channel) -> GrpcLocker {
        GrpcLocker::Unary(LockClient::new(channel))
    }

    /// A client of a new `Pipeline` stream on `channel` (clone it to share
    /// the stream).
    pub async fn pipeline(channel: Channel) -> anyhow::Result<GrpcLocker> {
        Ok(GrpcLocker::Pipeline(
            Pipeline::open(LockClient::new(channel))
                .await
                .context("opening a Pipeline stream")?,
        ))
    }

    async fn acquire(&self, name: String, wait: Option<Duration>) -> anyhow::Result<Option<(String, String)>> {
        let request = AcquireRequest {
            resource: name.clone(),
            ttl: Some(prost_duration(TTL)),
            wait: wait.map(prost_duration),
            owner: String::new(),
            ..AcquireRequest::default()
        };
        let reply = match self {
            GrpcLocker::Unary(client) => client.clone().acquire(request).await?.into_inner(),
            GrpcLocker::Pipeline(pipeline) => pipeline.acquire(request).await?,
        };
        Ok(match reply.lease {
            Some(lease) if reply.acquired => Some((name, lease.value)),
            _ => None,
        })
    }
}

impl Locker for GrpcLocker {
    type Held = (String, String);

    async fn once(&self, name: String) -> anyhow::Result<Option<Self::Held>> {
        self.acquire(name, None).await
    }

    async fn waiting(&self, name: String) -> anyhow::Result<Option<Self::Held>> {
        self.acquire(name, Some(WAIT)).await
    }

    async fn release(&self, (resource, value): Self::Held) -> anyhow::Result<()> {
        let request = ReleaseRequest { resource, value };
        let reply = match self {
            GrpcLocker::Unary(client) => client.clone().release(request).await?.into_inner(),
            GrpcLocker::Pipeline(pipeline) => pipeline.release(request).await?,
        };
        if reply.released {
            Ok(())
        } else {
            Err(anyhow!("released = false"))
        }
    }
}

fn prost_duration(d: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}

/// Workload (d)'s parameters.
pub struct SessionPlan {
    pub sessions: usize,
    pub channels: usize,
    pub ttl: Duration,
    pub duration: Duration,
}

/// What workload (d) found.
#[derive(Default, Clone)]
pub struct SessionOutcome {
    pub planned: usize,
    pub held: usize,
    pub failed_to_open: usize,
    /// Starts refused and asked again.
    pub open_retries: u64,
    pub first_error: Option<String>,
    pub open_seconds: f64,
    pub rss_before: Option<u64>,
    pub rss_held: Option<u64>,
    pub rss_peak: Option<u64>,
    pub seconds: f64,
    pub cpu: CpuSnapshot,
    /// Extensions the daemon counted (`redlock_extend_total{status="success"}`) in the window.
    pub renewals_metric: Option<f64>,
    /// EXTENDED events the sessions received in the window.
    pub renewals_seen: u64,
    /// Sessions that ended with LOST (or broke) while held, from ACQUIRED
    /// to the end of the window.
    pub lost: u64,
    /// Of those, in the window.
    pub lost_in_window: u64,
    /// Why the first one ended.
    pub lost_reason: Option<String>,
    pub ttl: Duration,
}

/// Opens `plan.sessions` Hold sessions spread over `plan.channels`
/// connections, holds them for `plan.duration` measuring the daemon, then
/// closes them (the daemon releases every lock).
pub async fn sessions(daemon: &Daemon, plan: &SessionPlan, watched: &[Watched]) -> anyhow::Result<SessionOutcome> {
    let pid = daemon.pid().context("redlockd is not running")?;
    let mut outcome = SessionOutcome {
        planned: plan.sessions,
        ttl: plan.ttl,
        rss_before: measure::rss_bytes(pid),
        ..SessionOutcome::default()
    };
    let channels = daemon.channels(plan.channels.max(1)).await?;
    let extended = Arc::new(AtomicU64::new(0));
    let lost = Arc::new(Lost::default());
    let retries = Arc::new(AtomicU64::new(0));
    let (close, closing) = watch::channel(false);
    let opening = Instant::now();
    let opened: Vec<anyhow::Result<tokio::task::JoinHandle<()>>> = futures::stream::iter(0..plan.sessions)
        .map(|i| {
            let client = LockClient::new(channels[i % channels.len()].clone());
            let (extended, lost, closing) = (extended.clone(), lost.clone(), closing.clone());
            let ttl = plan.ttl;
            let retries = retries.clone();
            async move {
                // A client retries a refused start (UNAVAILABLE when the
                // masters' answers were slowed past node_timeout by the burst).
                let mut attempt = 1;
                loop {
                    let opened = open_session(client.clone(), i, ttl, extended.clone(), lost.clone(), closing.clone());
                    match opened.await {
                        Err(_) if attempt < OPEN_ATTEMPTS => {
                            retries.fetch_add(1, Ordering::Relaxed);
                            tokio::time::sleep(Duration::from_millis(100) * attempt).await;
                            attempt += 1;
                        }
                        done => return done,
                    }
                }
            }
        })
        .buffer_unordered(OPENING_AT_ONCE)
        .collect()
        .await;
    outcome.open_seconds = opening.elapsed().as_secs_f64();
    outcome.open_retries = retries.load(Ordering::Relaxed);
    let mut tasks = Vec::new();
    for session in opened {
        match session {
            Ok(task) => tasks.push(task),
            Err(e) => {
                outcome.failed_to_open += 1;
                outcome.first_error.get_or_insert_with(|| format!("{e:#}"));
            }
        }
    }
    outcome.held = tasks.len();
    // Let the renewals spread out over a TTL before measuring.
    tokio::time::sleep(plan.ttl / 2).await;
    let (lost_before, extended_before) = (lost.count.load(Ordering::Relaxed), extended.load(Ordering::Relaxed));
    let metric_before = daemon.metric("redlock_extend_total{status=\"success\"}");
    let before = CpuSnapshot::take(watched);
    let started = Instant::now();
    tokio::time::sleep(plan.duration).await;
    outcome.seconds = started.elapsed().as_secs_f64();
    let after = CpuSnapshot::take(watched);
    outcome.cpu = before.until(&after);
    outcome.rss_held = measure::rss_bytes(pid);
    outcome.rss_peak = measure::peak_rss_bytes(pid);
    outcome.renewals_seen = extended.load(Ordering::Relaxed) - extended_before;
    outcome.renewals_metric = daemon
        .metric("redlock_extend_total{status=\"success\"}")
        .zip(metric_before)
        .map(|(a, b)| a - b);
    outcome.lost = lost.count.load(Ordering::Relaxed);
    outcome.lost_in_window = outcome.lost - lost_before;
    outcome.lost_reason = lost.first.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let _ = close.send(true);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    for mut task in tasks {
        if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
            task.abort();
        }
    }
    Ok(outcome)
}

/// Sessions that ended while held.
#[derive(Default)]
struct Lost {
    count: AtomicU64,
    first: std::sync::Mutex<Option<String>>,
}

impl Lost {
    fn record(&self, why: String) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.first.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(why);
    }
}

/// Opens one session and waits for ACQUIRED; the returned task keeps it
/// open (counting EXTENDED and LOST) until `closing`, then half-closes and
/// reads to the end (RELEASED).
async fn open_session(
    mut client: LockClient<Channel>,
    index: usize,
    ttl: Duration,
    extended: Arc<AtomicU64>,
    lost: Arc<Lost>,
    mut closing: watch::Receiver<bool>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let (requests, outbound) = mpsc::channel(1);
    requests
        .send(HoldRequest {
            request: Some(Ask::Start(HoldStart {
                resource: format!("bench:d:{index}"),
                ttl: Some(prost_duration(ttl)),
                wait: None,
                owner: String::new(),
                max_hold: None,
                ..HoldStart::default()
            })),
        })
        .await
        .map_err(|_| anyhow!("request stream closed"))?;
    let mut events = client
        .hold(tokio_stream::wrappers::ReceiverStream::new(outbound))
        .await?
        .into_inner();
    let first = events.message().await?.context("the stream ended before ACQUIRED")?;
    if first.event() != HoldEvent::Acquired {
        bail!("{:?} ({})", first.event(), first.reason);
    }
    Ok(tokio::spawn(async move {
        let mut requests = Some(requests);
        loop {
            tokio::select! {
                event = events.message() => match event {
                    Ok(Some(e)) if e.event() == HoldEvent::Extended => {
                        extended.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(Some(e)) if e.event() == HoldEvent::Released => return,
                    other => {
                        if requests.is_some() {
                            lost.record(match other {
                                Ok(Some(e)) => format!("{:?} ({})", e.event(), e.reason),
                                Ok(None) => "the stream ended".into(),
                                Err(status) => format!("{status}"),
                            });
                        }
                        return;
                    }
                },
                _ = closing.changed(), if requests.is_some() => {
                    // Half-close: the daemon releases and answers RELEASED.
                    requests = None;
                }
            }
        }
    }))
}

/// The daemon's release build in the repository's target/ (CARGO_TARGET_DIR
/// when set, as `cargo build` takes it).
pub fn default_binary() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::repository().join("target"));
    target.join("release").join("redlockd")
}
