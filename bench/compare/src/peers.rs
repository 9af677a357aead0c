//! Where each peer of another language is (docs/performance.md#method), or
//! why it is skipped: scripts/bench installs and builds them, under the
//! repository's `bench/` (node-redlock's npm modules, go-redsync's binary,
//! the jar of Redisson's and Curator's mains), with whatever toolchain the
//! machine has.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::System;
use crate::peer::Peer;

/// The peer that runs `system` (node, go, one of the Redisson pair, or
/// Curator on ZooKeeper).
pub fn find(system: System, root: &Path) -> Result<Peer, String> {
    let bench = root.join("bench");
    match system {
        System::Node => node(&bench.join("node")),
        System::Go => go_redsync(&bench.join("go")),
        System::Redisson => redisson(&bench.join("java"), "rlock", 1),
        System::RedissonRedlock => redisson(&bench.join("java"), "redlock", 5),
        System::Zookeeper => curator(&bench.join("java")),
        other => Err(format!("{} is not a peer of another language", other.label())),
    }
}

/// bench/node/bench.js on `node`, with the modules of `npm ci`.
fn node(dir: &Path) -> Result<Peer, String> {
    let node = on_path("node").ok_or("no node (node is not on PATH)")?;
    if !dir.join("node_modules").join("redlock").is_dir() {
        return Err(format!("{}/node_modules is missing (npm ci there)", dir.display()));
    }
    let version = |package: &str| {
        let json =
            std::fs::read_to_string(dir.join("node_modules").join(package).join("package.json")).unwrap_or_default();
        serde_json::from_str::<serde_json::Value>(&json)
            .ok()
            .and_then(|v| v["version"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "?".into())
    };
    let environment = format!(
        "redlock {} + ioredis {} on node {}",
        version("redlock").trim_start_matches('v'),
        version("ioredis"),
        first_line(&node, &["--version"])
    );
    Ok(Peer {
        name: "bench.js",
        args: vec![dir.join("bench.js").into()],
        program: node,
        masters: 5,
        environment: ("node-redlock".into(), environment),
    })
}

/// bench/go, built by `go build -o target/go-redsync`.
fn go_redsync(dir: &Path) -> Result<Peer, String> {
    let binary = dir.join("target").join("go-redsync");
    if !binary.is_file() {
        return Err(match on_path("go") {
            None => "no go toolchain (go is not on PATH)".into(),
            Some(_) => format!("{} is not built (go build there)", dir.display()),
        });
    }
    let go_mod = std::fs::read_to_string(dir.join("go.mod")).unwrap_or_default();
    let required = |module: &str| {
        go_mod
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix(module)?
                    .split_whitespace()
                    .next()
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| "?".into())
    };
    // `go version FILE`: "FILE: go1.26.8".
    let built_with = on_path("go")
        .map(|go| first_line(&go, &[OsStr::new("version"), binary.as_os_str()]))
        .and_then(|l| l.rsplit(' ').next().map(str::to_owned))
        .unwrap_or_else(|| "?".into());
    let environment = format!(
        "redsync {} + go-redis {} (default pool), built with {built_with}",
        required("github.com/go-redsync/redsync/v4 "),
        required("github.com/redis/go-redis/v9 "),
    );
    Ok(Peer {
        name: "go-redsync",
        program: binary,
        args: Vec::new(),
        masters: 5,
        environment: ("go-redsync".into(), environment),
    })
}

/// bench/java's Redisson main, on `java`: `mode` "rlock" (one master) or
/// "redlock" (five).
fn redisson(dir: &Path, mode: &str, masters: usize) -> Result<Peer, String> {
    let jvm = Jvm::find(dir)?;
    let environment = format!(
        "Redisson {} (netty {}) on {}, one client per master; RLock on the first master, \
         RedissonRedLock over all five",
        jvm.version("redisson-"),
        jvm.version("netty-common-"),
        jvm.runtime,
    );
    Ok(jvm.peer(
        "redisson-bench",
        "bench.RedissonBench",
        mode,
        masters,
        ("redisson", environment),
    ))
}

/// bench/java's Curator main: `InterProcessMutex` on the ZooKeeper whose
/// connect string comes as its one URL.
fn curator(dir: &Path) -> Result<Peer, String> {
    let jvm = Jvm::find(dir)?;
    let environment = format!(
        "curator-recipes {} with the zookeeper {} client on {}, one CuratorFramework (one session) per process",
        jvm.version("curator-recipes-"),
        jvm.version("zookeeper-"),
        jvm.runtime,
    );
    Ok(jvm.peer(
        "curator-bench",
        "bench.CuratorBench",
        "mutex",
        1,
        ("curator", environment),
    ))
}

/// bench/java's elections main for (e) and (f) (`bench.CuratorElection`):
/// Curator's `LeaderLatch` and `CuratorCache` on the ZooKeeper the
/// benchmark starts, driven by `elections_zookeeper.rs`.
pub fn curator_election(root: &Path) -> Result<Peer, String> {
    let jvm = Jvm::find(&root.join("bench").join("java"))?;
    let environment = format!(
        "curator-recipes {} (LeaderLatch, CuratorCache) on {}",
        jvm.version("curator-recipes-"),
        jvm.runtime
    );
    Ok(jvm.peer(
        "curator-election",
        "bench.CuratorElection",
        "election",
        1,
        ("curator (elections)", environment),
    ))
}

/// bench/java, built by `mvn -q -B package` (one jar, both mains), and `java`.
struct Jvm {
    java: PathBuf,
    target: PathBuf,
    /// `java -version`'s first line.
    runtime: String,
}

impl Jvm {
    fn find(dir: &Path) -> Result<Jvm, String> {
        let target = dir.join("target");
        let java = on_path("java");
        let (Some(java), true) = (java, target.join("redisson-bench.jar").is_file()) else {
            return Err(match (on_path("java"), on_path("mvn")) {
                (None, _) => "no java (java is not on PATH)".into(),
                (Some(_), None) => format!("no mvn to build {}", dir.display()),
                (Some(_), Some(_)) => format!("{} is not built (mvn -q -B package there)", dir.display()),
            });
        };
        // `java -version` writes to stderr: openjdk version "17.0.15" 2025-04-15.
        let runtime = Command::new(&java)
            .arg("-version")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stderr).ok())
            .and_then(|s| s.lines().next().map(|l| l.replace('"', "")))
            .unwrap_or_else(|| "?".into());
        Ok(Jvm { java, target, runtime })
    }

    /// The version in a dependency jar's name: redisson-4.7.0.jar.
    fn version(&self, prefix: &str) -> String {
        std::fs::read_dir(self.target.join("lib"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .find_map(|n| {
                let v = n.strip_prefix(prefix)?.strip_suffix(".jar")?;
                v.starts_with(|c: char| c.is_ascii_digit()).then(|| v.to_owned())
            })
            .unwrap_or_else(|| "?".into())
    }

    fn peer(
        self,
        name: &'static str,
        main: &str,
        mode: &str,
        masters: usize,
        (what, environment): (&str, String),
    ) -> Peer {
        let mut classpath = OsString::from(self.target.join("redisson-bench.jar").as_os_str());
        classpath.push(":");
        classpath.push(self.target.join("lib").join("*"));
        Peer {
            name,
            program: self.java,
            args: vec!["-cp".into(), classpath, main.into(), "--mode".into(), mode.into()],
            masters,
            environment: (what.into(), environment),
        }
    }
}

/// `program` in a directory of PATH.
fn on_path(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(program)).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|p| p.is_file())
}

/// The first line `program args` prints on stdout ("?" when it cannot run).
fn first_line(program: &Path, args: &[impl AsRef<OsStr>]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}
