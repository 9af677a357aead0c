//! ZooKeeper with Apache Curator's `InterProcessMutex`, the fenced lock a
//! Java shop picks instead of etcd: Debian's ZooKeeper 3.8 (the `zookeeper`
//! package, the server jars that `zookeeperd`'s service runs, under
//! /usr/share/java; scripts/bench installs it) started here as a standalone
//! server of its own, on a free loopback port with a temporary data
//! directory and config, never the system service; stopped (its data
//! removed) on drop. The client is bench/java's `CuratorBench` peer
//! ([`crate::peers`]); the server's CPU is read from /proc like etcd's.
//! `BENCH_ZOOKEEPER_JAR` names another server jar (a missing path: the
//! column reads "skipped: …").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::measure::{Role, Watched};
use crate::{Run, System, Workload};

/// Where Debian's `libzookeeper-java` puts the server (its manifest's
/// Class-Path names the jars it needs, under /usr/share/java too).
const DEBIAN_JAR: &str = "/usr/share/java/zookeeper.jar";
/// Debian's SLF4J binding that writes the server's warnings to its log.
const DEBIAN_SLF4J: &str = "/usr/share/java/slf4j-simple.jar";

/// A running standalone ZooKeeper; stopped on drop.
pub struct ZooKeeper {
    child: Option<Child>,
    /// `127.0.0.1:PORT`, the clients' connect string.
    pub connect: String,
    dir: tempfile::TempDir,
    jar: PathBuf,
}

/// Starts ZooKeeper when its column is asked for in (a)–(c) and not already
/// skipped (its peer missing), or for the elections (e) and (f);
/// otherwise, or when it cannot start, marks its runs skipped or failed
/// with the reason.
pub async fn start(
    wanted: bool,
    shared: &[Workload],
    elections: bool,
    runs: &mut BTreeMap<(Workload, System), Run>,
) -> Option<ZooKeeper> {
    let mark = |runs: &mut BTreeMap<_, _>, run: &dyn Fn() -> Run| {
        for &w in shared {
            runs.insert((w, System::Zookeeper), run());
        }
    };
    let skipped = shared.iter().any(|&w| runs.contains_key(&(w, System::Zookeeper)));
    if !wanted || (shared.is_empty() && !elections) || (skipped && !elections) {
        return None;
    }
    let (java, jar) = match find() {
        Ok(found) => found,
        Err(why) => {
            crate::say(format!("{}: skipped: {why}", System::Zookeeper.label()));
            mark(runs, &|| Run::Skipped(why.clone()));
            return None;
        }
    };
    crate::say(format!("starting ZooKeeper ({})", jar.display()));
    match ZooKeeper::start(&java, &jar).await {
        Ok(zookeeper) => Some(zookeeper),
        Err(e) => {
            crate::say(format!("ZooKeeper: {e:#}"));
            mark(runs, &|| Run::Failed(format!("could not start: {e:#}")));
            None
        }
    }
}

/// `java` on PATH and the server's jar, or why not.
fn find() -> Result<(PathBuf, PathBuf), String> {
    let (jar, why) = match std::env::var_os("BENCH_ZOOKEEPER_JAR") {
        Some(jar) => (PathBuf::from(jar), "no such file (BENCH_ZOOKEEPER_JAR)"),
        None => (PathBuf::from(DEBIAN_JAR), "not installed (`apt-get install zookeeper`)"),
    };
    if !jar.is_file() {
        return Err(format!("{why}: {}", jar.display()));
    }
    let java = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("java")).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|p| p.is_file())
        .ok_or("no java (java is not on PATH)")?;
    Ok((java, jar))
}

impl ZooKeeper {
    async fn start(java: &Path, jar: &Path) -> anyhow::Result<ZooKeeper> {
        let dir = tempfile::Builder::new().prefix("redlockd-bench-zookeeper-").tempdir()?;
        let port = redlockd::dev::free_port()?;
        let data = dir.path().join("data");
        std::fs::create_dir(&data)?;
        // Standalone (no server.N lines). The defaults otherwise, fsync of
        // the transaction log before each reply included (forceSync=yes);
        // no admin server (Jetty), no limit on connections from loopback;
        // `ruok` and `srvr` to see it serve and ask its version.
        let config = format!(
            "tickTime=2000\ndataDir={}\nclientPort={port}\nclientPortAddress=127.0.0.1\n\
             maxClientCnxns=0\nadmin.enableServer=false\n4lw.commands.whitelist=ruok,srvr\n",
            data.display()
        );
        let cfg = dir.path().join("zoo.cfg");
        std::fs::write(&cfg, config)?;
        let mut classpath = jar.as_os_str().to_owned();
        if Path::new(DEBIAN_SLF4J).is_file() {
            classpath.push(":");
            classpath.push(DEBIAN_SLF4J);
        }
        let log = std::fs::File::create(dir.path().join("zookeeper.log"))?;
        let child = Command::new(java)
            // zkServer.sh's default heap.
            .args(["-Xmx1000m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp"])
            .arg(classpath)
            .arg("org.apache.zookeeper.server.ZooKeeperServerMain")
            .arg(&cfg)
            // No JAVA_TOOL_OPTIONS or the like from the caller.
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {} for {}", java.display(), jar.display()))?;
        let mut zookeeper = ZooKeeper {
            child: Some(child),
            connect: format!("127.0.0.1:{port}"),
            dir,
            jar: jar.to_owned(),
        };
        let started = Instant::now();
        loop {
            if let Some(status) = zookeeper.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                bail!("ZooKeeper exited with {status}:\n{}", zookeeper.log());
            }
            match zookeeper.four_letters("ruok").await {
                Ok(reply) if reply == "imok" => return Ok(zookeeper),
                Ok(_) | Err(_) if started.elapsed() < Duration::from_secs(30) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Ok(reply) => bail!("ZooKeeper answered ruok with {reply:?}:\n{}", zookeeper.log()),
                Err(e) => bail!("ZooKeeper did not serve within 30 s ({e:#}):\n{}", zookeeper.log()),
            }
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The server's process, for the CPU table.
    pub fn watched(&self) -> Vec<Watched> {
        self.pid()
            .map(|pid| Watched {
                role: Role::Zookeeper,
                pid,
            })
            .into_iter()
            .collect()
    }

    /// For the report's list of versions.
    pub async fn environment(&self) -> (String, String) {
        // "Zookeeper version: 3.8.0-${mvngit.commit.id}, built on …" (Debian's build).
        let srvr = self.four_letters("srvr").await.unwrap_or_default();
        let version = srvr
            .lines()
            .find_map(|l| l.strip_prefix("Zookeeper version: "))
            .and_then(|v| v.split(['-', ',']).next())
            .unwrap_or("?")
            .to_owned();
        (
            "zookeeper".into(),
            format!(
                "ZooKeeper {version} ({}), standalone, transaction log fsynced on local disk; \
                 client: Curator's InterProcessMutex (bench/java)",
                self.jar.display()
            ),
        )
    }

    /// One of ZooKeeper's four-letter commands on a connection of its own.
    async fn four_letters(&self, command: &str) -> anyhow::Result<String> {
        let ask = async {
            let mut stream = tokio::net::TcpStream::connect(&self.connect).await?;
            stream.write_all(command.as_bytes()).await?;
            let mut reply = String::new();
            stream.read_to_string(&mut reply).await?;
            anyhow::Ok(reply)
        };
        tokio::time::timeout(Duration::from_secs(2), ask)
            .await
            .context("no reply within 2 s")?
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("zookeeper.log")).unwrap_or_default()
    }
}

impl Drop for ZooKeeper {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            crate::daemon::terminate(child, Duration::from_secs(10));
        }
    }
}
