//! The daemon under measure: the binary given, against the masters given,
//! natively (its Redis calls are counted) or under `valgrind
//! --tool=callgrind` (its instructions are), with the settings that keep
//! time-driven work out of the windows (docs/performance.md#the-budget).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};

/// How long a daemon may take to listen (valgrind starts slowly).
const LISTEN_LIMIT: Duration = Duration::from_secs(120);

/// A running daemon; stopped (SIGTERM, then SIGKILL) on drop.
pub struct Daemon {
    child: Child,
    pub addr: String,
    /// Where Prometheus would scrape it.
    metrics: String,
    dir: tempfile::TempDir,
    /// Under callgrind.
    callgrind: bool,
    /// Dumps made so far (callgrind only).
    dumps: usize,
}

impl Daemon {
    /// Starts `binary` against `nodes`, under callgrind when `callgrind`;
    /// `planted`: the test-only extra call in its grant script
    /// (`REDLOCKD_TEST_PLANTED_CALL`, honoured by debug builds only).
    pub async fn start(binary: &Path, nodes: &[String], callgrind: bool, planted: bool) -> anyhow::Result<Daemon> {
        if !binary.is_file() {
            bail!("{} not found: `cargo build --bin redlockd` builds it", binary.display());
        }
        let dir = tempfile::Builder::new().prefix("redlockd-budget-").tempdir()?;
        let addr = format!("127.0.0.1:{}", redlockd::dev::free_port()?);
        let metrics = format!("127.0.0.1:{}", redlockd::dev::free_port()?);
        let mut command = if callgrind {
            let mut valgrind = Command::new("valgrind");
            valgrind
                .arg("--tool=callgrind")
                .arg(format!("--callgrind-out-file={}", out_file(dir.path()).display()))
                .arg(binary);
            valgrind
        } else {
            Command::new(binary)
        };
        let log = std::fs::File::create(dir.path().join("redlockd.log"))?;
        command
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .env("REDLOCKD__SERVER__LISTEN", &addr)
            .env("REDLOCKD__METRICS__LISTEN", &metrics)
            .env("REDLOCKD__REDIS__NODES", nodes.join(","))
            // Fresh masters would sit in quarantine for lock.max_ttl.
            .env("REDLOCKD__SAFETY__QUARANTINE", "false")
            // Probes run per second, not per cycle: at their slowest they
            // stay out of the windows.
            .env("REDLOCKD__SAFETY__CHECK_INTERVAL", "1m")
            // Under callgrind the daemon itself is slow to read the replies:
            // a master must not count as timed out (min_ttl: 5 x node_timeout).
            .env("REDLOCKD__REDIS__NODE_TIMEOUT", "5s")
            .env("REDLOCKD__LOCK__MIN_TTL", "25s")
            .env("REDLOCKD__LOCK__DEFAULT_TTL", "1m")
            // The count must not depend on the machine's cores.
            .env("REDLOCKD__SERVER__WORKER_THREADS", "1")
            // As the benchmark runs it: no audit trail.
            .env("REDLOCKD__LOG__FILTER", "warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        if planted {
            command.env("REDLOCKD_TEST_PLANTED_CALL", "1");
        } else {
            command.env_remove("REDLOCKD_TEST_PLANTED_CALL");
        }
        let child = command
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut daemon = Daemon {
            child,
            addr,
            metrics,
            dir,
            callgrind,
            dumps: 0,
        };
        daemon.wait_listening().await?;
        Ok(daemon)
    }

    /// The daemon's log (valgrind's too) so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("redlockd.log")).unwrap_or_default()
    }

    async fn wait_listening(&mut self) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + LISTEN_LIMIT;
        while tokio::time::Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                bail!("redlockd exited with {status}:\n{}", self.log());
            }
            if tokio::net::TcpStream::connect(&self.addr).await.is_ok() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!(
            "redlockd did not listen on {} within {LISTEN_LIMIT:?}:\n{}",
            self.addr,
            self.log()
        )
    }

    pub fn under_callgrind(&self) -> bool {
        self.callgrind
    }

    /// Waits until the daemon counts all `masters` usable (verified, so
    /// that no lock is refused for a master still starting), by its
    /// `redlock_node_state` series, or `limit` passes.
    pub async fn wait_usable(&self, masters: usize, limit: Duration) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + limit;
        let mut usable = 0;
        while tokio::time::Instant::now() < deadline {
            let page = scrape(&self.metrics).await.unwrap_or_default();
            usable = page
                .lines()
                .filter(|l| l.starts_with("redlock_node_state{") && l.contains("state=\"usable\"") && l.ends_with(" 1"))
                .count();
            if usable == masters {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        bail!("{usable} of {masters} masters usable after {limit:?} (redlock_node_state)")
    }

    /// Callgrind: zeroes the counters.
    pub fn zero(&self) -> anyhow::Result<()> {
        self.control(&["--zero"])
    }

    /// Callgrind: the instructions counted since the last `zero`, dumped now.
    pub fn dump(&mut self) -> anyhow::Result<u64> {
        self.control(&["--dump"])?;
        self.dumps += 1;
        let file = PathBuf::from(format!("{}.{}", out_file(self.dir.path()).display(), self.dumps));
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        // `summary: <Ir>`: the events counted in the dump's period.
        text.lines()
            .find_map(|l| l.strip_prefix("summary:"))
            .and_then(|n| n.trim().parse().ok())
            .with_context(|| format!("no `summary:` line in {}", file.display()))
    }

    fn control(&self, args: &[&str]) -> anyhow::Result<()> {
        let out = Command::new("callgrind_control")
            .args(args)
            .arg(self.child.id().to_string())
            .output()
            .context("running callgrind_control (Debian's valgrind)")?;
        let said = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !said.contains("OK") {
            bail!(
                "callgrind_control {args:?}: {said}{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }
}

/// `GET /metrics` from `addr`: the text of the page.
async fn scrape(addr: &str) -> anyhow::Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await?;
    let mut page = String::new();
    stream.read_to_string(&mut page).await?;
    Ok(page)
}

/// Callgrind's output: dumps go to `<this>.1`, `<this>.2`, ...
fn out_file(dir: &Path) -> PathBuf {
    dir.join("callgrind.out")
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        for _ in 0..300 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
