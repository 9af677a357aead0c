//! What the numbers were measured with: the machine, the masters, the
//! daemon and each peer's versions, printed under the report.

use std::path::Path;
use std::process::Command;

/// What the numbers were measured with.
pub fn environment(
    daemon: &Path,
    daemon_ran: bool,
    peers: impl Iterator<Item = (String, String)>,
    etcd: Option<&Path>,
) -> Vec<(String, String)> {
    let first_line = |program: &Path, arg: &str| {
        Command::new(program)
            .arg(arg)
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.lines().next().map(str::to_owned))
            .unwrap_or_else(|| "?".into())
    };
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("?", str::trim)
        .to_owned();
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let debian = std::fs::read_to_string("/etc/debian_version").unwrap_or_default();
    let mut env = vec![(
        "machine".to_owned(),
        format!(
            "{cores} cores ({model}), Linux {}, Debian {}",
            kernel.trim(),
            debian.trim()
        ),
    )];
    let redis = redlockd::dev::find_redis_server()
        .map(|p| first_line(&p, "--version"))
        .unwrap_or_default();
    // "Redis server v=7.0.15 sha=… malloc=…": the version is enough.
    let redis = redis
        .split_whitespace()
        .find_map(|w| w.strip_prefix("v="))
        .map_or(redis.clone(), |v| format!("redis-server {v}"));
    env.push(("masters".into(), format!("5 × {redis}, no persistence, on loopback")));
    if daemon_ran {
        env.push((
            "redlockd".into(),
            format!(
                "{} (release), its own process; clients over gRPC (tonic)",
                first_line(daemon, "--version")
            ),
        ));
    }
    env.push((
        "rslock".into(),
        format!("{} (in the benchmark process)", locked_version("rslock")),
    ));
    for (name, versions) in peers {
        if !env.iter().any(|(n, _)| *n == name) {
            env.push((name, versions));
        }
    }
    if let Some(etcd) = etcd {
        env.push((
            "etcd".into(),
            format!(
                "etcd {}, single node, data on local disk; client: tonic with etcd's message definitions",
                first_line(etcd, "--version").trim_start_matches("etcd Version: ")
            ),
        ));
    }
    env
}

/// A package's version in Cargo.lock.
fn locked_version(package: &str) -> String {
    let lock = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).unwrap_or_default();
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == format!("name = \"{package}\"")
            && let Some(v) = lines.next().and_then(|l| l.strip_prefix("version = "))
        {
            return v.trim_matches('"').to_owned();
        }
    }
    "?".into()
}
