//! Local `redis-server` processes on free loopback ports: the masters of
//! `redlockd dev`, and the building block of the integration tests. Each
//! process lives in its own temporary directory and is killed on drop.

mod ports;

pub use ports::{PortClaim, claim_port};

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a fresh `redis-server` may take to answer `PING`.
const START_LIMIT: Duration = Duration::from_secs(10);

/// Names the `redis-server` binary to use instead of the one on `PATH`
/// (the tests' older-server pass, `scripts/test-old-redis`).
pub const REDIS_SERVER_ENV: &str = "REDLOCKD_TEST_REDIS_SERVER";

/// No `redis-server` to run.
#[derive(Debug, thiserror::Error)]
pub enum NoRedisServer {
    /// `REDLOCKD_TEST_REDIS_SERVER` names a path that is not a file.
    #[error("{REDIS_SERVER_ENV}={}: no such file", .named.display())]
    NotAFile {
        /// The path it names.
        named: PathBuf,
    },
    /// None on `PATH` or in Debian's usual places.
    #[error("redis-server not found: install it (`apt-get install redis-server`) or run scripts/dev")]
    NotFound,
}

/// Why `start_masters` could not start its masters.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// No `redis-server` to run.
    #[error(transparent)]
    NoRedisServer(#[from] NoRedisServer),
    /// One did not start.
    #[error("starting redis-server: {0}")]
    Start(io::Error),
}

/// Finds `redis-server`: the binary `REDLOCKD_TEST_REDIS_SERVER` names, or
/// else the one on `PATH` or in Debian's usual places.
///
/// # Errors
/// When it is nowhere (the message says how to install it), or the binary
/// the variable names is not a file.
pub fn find_redis_server() -> Result<PathBuf, NoRedisServer> {
    if let Some(named) = std::env::var_os(REDIS_SERVER_ENV).filter(|v| !v.is_empty()) {
        let named = PathBuf::from(named);
        return if named.is_file() {
            Ok(named)
        } else {
            Err(NoRedisServer::NotAFile { named })
        };
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("redis-server"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain([
            PathBuf::from("/usr/bin/redis-server"),
            PathBuf::from("/usr/sbin/redis-server"),
        ])
        .find(|p| p.is_file())
        .ok_or(NoRedisServer::NotFound)
}

/// The major version of the `redis-server` at `binary` (`--version`:
/// `Redis server v=7.0.15 …`), or 0 when it cannot be read.
pub fn major_version(binary: &Path) -> u32 {
    let Ok(out) = Command::new(binary).arg("--version").output() else {
        return 0;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    (text.split_once("v=").and_then(|(_, v)| v.split('.').next()))
        .and_then(|major| major.parse().ok())
        .unwrap_or(0)
}

/// A port on 127.0.0.1 that was free a moment ago (never 6379).
///
/// # Errors
/// When no socket can be bound.
pub fn free_port() -> io::Result<u16> {
    loop {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()?.port();
        if port != 6379 {
            return Ok(port);
        }
    }
}

/// One `redis-server` child process.
pub struct RedisProcess {
    binary: PathBuf,
    /// Its port, held across restarts (docs/operations.md#testing).
    port: PortClaim,
    /// Other ports it listens on (a cluster bus), held likewise.
    also: Vec<PortClaim>,
    dir: tempfile::TempDir,
    extra: Vec<String>,
    child: Option<Child>,
}

impl RedisProcess {
    /// Starts a master on a free port, without persistence, and waits until
    /// it answers `PING`. `extra` are more `--flag value` arguments.
    ///
    /// # Errors
    /// When the process cannot be started or does not answer in time.
    pub fn start(binary: &Path, extra: &[&str]) -> io::Result<RedisProcess> {
        let mut process = RedisProcess {
            binary: binary.to_owned(),
            port: PortClaim::unclaimed(0),
            also: Vec::new(),
            dir: tempfile::Builder::new().prefix("redlockd-redis-").tempdir()?,
            extra: extra.iter().map(|s| (*s).to_owned()).collect(),
            child: None,
        };
        process.port = process.free_port()?;
        process.spawn_on_a_free_port()?;
        Ok(process)
    }

    /// A free port for this server: before Redis 7 a cluster node's bus is
    /// its port + 10000, which must be free too (and a port at most 55535).
    fn free_port(&self) -> io::Result<PortClaim> {
        let fixed_bus = self.extra.iter().any(|a| a == "--cluster-enabled") && major_version(&self.binary) < 7;
        loop {
            let claim = claim_port()?;
            let port = claim.port();
            if !fixed_bus || (port <= 55535 && TcpListener::bind((Ipv4Addr::LOCALHOST, port + 10000)).is_ok()) {
                return Ok(claim);
            }
        }
    }

    /// Spawns on `self.port`, or on another free port if another process
    /// bound that one first (tests start many servers at once).
    fn spawn_on_a_free_port(&mut self) -> io::Result<()> {
        let mut tries = 1;
        loop {
            // Its own port only (a taken `--tls-port` is not fixed by moving).
            let taken = format!("127.0.0.1:{}: bind: Address already in use", self.port());
            match self.spawn() {
                Err(e) if tries < 10 && e.to_string().contains(&taken) => {
                    tries += 1;
                    self.port = self.free_port()?;
                }
                outcome => return outcome,
            }
        }
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port())
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port.port()
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Its data directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `kill -9`, and waits for the process to be gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// `SIGSTOP`: the process freezes (a long GC-like pause), connections stay open.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// `SIGCONT` after `pause`.
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, sig: &str) {
        if let Some(pid) = self.pid() {
            let _ = Command::new("kill").args([sig, &pid.to_string()]).status();
        }
    }

    /// Starts it again on the same port with the data it has on disk (none,
    /// unless persistence was switched on with `extra`).
    ///
    /// # Errors
    /// As for `start`.
    pub fn restart(&mut self) -> io::Result<()> {
        self.kill();
        self.spawn()
    }

    /// Starts it again on the same port with nothing: a master that lost
    /// its data.
    ///
    /// # Errors
    /// As for `start`.
    pub fn restart_empty(&mut self) -> io::Result<()> {
        self.kill();
        for entry in std::fs::read_dir(self.dir.path())? {
            let path = entry?.path();
            if path.is_dir() {
                std::fs::remove_dir_all(path)?;
            } else if path.extension().is_none_or(|e| e != "log") {
                std::fs::remove_file(path)?;
            }
        }
        self.spawn()
    }

    fn spawn(&mut self) -> io::Result<()> {
        let port = self.port().to_string();
        let dir = self.dir.path().to_string_lossy().into_owned();
        let log = self.dir.path().join("redis.log").to_string_lossy().into_owned();
        // What this run writes to the log starts here (a restart appends).
        let logged_before = std::fs::metadata(&log).map_or(0, |m| m.len());
        let mut args: Vec<&str> = vec![
            "--port",
            &port,
            "--bind",
            "127.0.0.1",
            "--dir",
            &dir,
            "--logfile",
            &log,
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "no",
            "--daemonize",
            "no",
        ];
        // `DEBUG` is on by default before Redis 7, which has no such flag.
        if major_version(&self.binary) >= 7 {
            args.extend(["--enable-debug-command", "local"]);
        }
        args.extend(self.extra.iter().map(String::as_str));
        let child = Command::new(&self.binary)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        self.child = Some(child);
        self.wait_ready(logged_before)
    }

    /// Waits until this very process says it accepts connections (another
    /// server that took the port first could answer `PING` as well) and
    /// answers `PING`.
    #[allow(
        clippy::disallowed_methods,
        reason = "a blocking wait for a process, outside any runtime"
    )]
    fn wait_ready(&mut self, logged_before: u64) -> io::Result<()> {
        let start = Instant::now();
        let this_run = || {
            let log = std::fs::read(self.dir.path().join("redis.log")).unwrap_or_default();
            let from = usize::try_from(logged_before).unwrap_or(usize::MAX).min(log.len());
            String::from_utf8_lossy(&log[from..]).into_owned()
        };
        while start.elapsed() < START_LIMIT {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                return Err(io::Error::other(format!(
                    "redis-server exited with {status}: {}",
                    this_run()
                )));
            }
            if this_run().contains("Ready to accept connections") && ping(self.port()).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(io::Error::other(format!(
            "redis-server on port {} did not log that it accepts connections and answer PING: {}",
            self.port(),
            this_run()
        )))
    }
}

impl Drop for RedisProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Sends `PING`; the server is up when it answers `+PONG`, or `-NOAUTH`
/// when it requires a password.
fn ping(port: u16) -> io::Result<()> {
    let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port))?;
    stream.set_read_timeout(Some(Duration::from_millis(500)))?;
    stream.write_all(b"PING\r\n")?;
    let mut reply = [0u8; 7];
    stream.read_exact(&mut reply)?;
    if &reply == b"+PONG\r\n" || reply.starts_with(b"-NOAUTH") {
        Ok(())
    } else {
        Err(io::Error::other("not ready"))
    }
}

/// Starts one Redis Cluster node (`--cluster-enabled yes`, its bus on a
/// port of its own), not yet joined to any cluster; `extra` are more
/// `--flag value` arguments. The bus port is picked apart from the node's
/// own: another process may take it first, and then the node starts again.
///
/// # Errors
/// When the process cannot be started or does not answer in time.
pub fn start_cluster_node(binary: &Path, extra: &[&str]) -> io::Result<RedisProcess> {
    let mut tries = 0;
    loop {
        let bus = claim_port()?;
        let bus_port = bus.port().to_string();
        let mut args = vec!["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"];
        // Before Redis 7 the bus is always the node's port + 10000.
        if major_version(binary) >= 7 {
            args.extend(["--cluster-port", &bus_port]);
        }
        args.extend_from_slice(extra);
        match RedisProcess::start(binary, &args) {
            Err(e) if tries < 5 && e.to_string().contains("Address already in use") => tries += 1,
            Ok(mut node) => {
                node.also.push(bus);
                return Ok(node);
            }
            outcome => return outcome,
        }
    }
}

/// Starts `n` independent masters.
///
/// # Errors
/// When any of them fails to start (those started are stopped again).
pub fn start_masters(n: usize) -> Result<Vec<RedisProcess>, StartError> {
    let binary = find_redis_server()?;
    (0..n)
        .map(|_| RedisProcess::start(&binary, &[]).map_err(StartError::Start))
        .collect()
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
