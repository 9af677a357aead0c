//! What the benchmark measures: latency samples and their percentiles, and
//! the CPU time and memory of the processes taking part, read from /proc.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

/// Latencies in microseconds.
#[derive(Default, Clone)]
pub struct Samples(Vec<u32>);

impl Samples {
    pub fn push(&mut self, took: Duration) {
        self.0.push(u32::try_from(took.as_micros()).unwrap_or(u32::MAX));
    }

    pub fn extend(&mut self, other: Samples) {
        self.0.extend(other.0);
    }

    pub fn from_micros(micros: Vec<u32>) -> Samples {
        Samples(micros)
    }

    pub fn sort(&mut self) {
        self.0.sort_unstable();
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The `p`-quantile (0 < p <= 1, nearest rank) of sorted samples.
    pub fn quantile(&self, p: f64) -> Option<Duration> {
        if self.0.is_empty() {
            return None;
        }
        let rank = (p * self.0.len() as f64).ceil() as usize;
        let index = rank.clamp(1, self.0.len()) - 1;
        Some(Duration::from_micros(u64::from(self.0[index])))
    }
}

/// A process whose CPU time counts, under a role shown in the tables.
#[derive(Clone)]
pub struct Watched {
    pub role: Role,
    pub pid: u32,
}

/// Who a process is.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Role {
    /// The process that drives the workload: this benchmark (with rslock
    /// in it), or node.
    Client,
    /// redlockd.
    Daemon,
    /// The five redis-servers, summed.
    Redis,
    /// etcd.
    Etcd,
    /// ZooKeeper.
    Zookeeper,
}

impl Role {
    pub fn label(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Daemon => "redlockd",
            Role::Redis => "redis ×5",
            Role::Etcd => "etcd",
            Role::Zookeeper => "zookeeper",
        }
    }
}

/// CPU seconds (user + system) per role at one moment, and the whole
/// machine's busy CPU seconds (so that other processes' load shows).
#[derive(Clone, Default, Debug)]
pub struct CpuSnapshot {
    by_role: BTreeMap<Role, f64>,
    machine: f64,
}

impl CpuSnapshot {
    pub fn take(watched: &[Watched]) -> CpuSnapshot {
        let mut by_role = BTreeMap::new();
        for w in watched {
            *by_role.entry(w.role).or_insert(0.0) += cpu_seconds(w.pid).unwrap_or(0.0);
        }
        CpuSnapshot {
            by_role,
            machine: machine_busy_seconds().unwrap_or(0.0),
        }
    }

    /// CPU seconds spent per role between `self` (earlier) and `later`;
    /// `machine` becomes what processes outside the roles used.
    pub fn until(&self, later: &CpuSnapshot) -> CpuSnapshot {
        let by_role: BTreeMap<Role, f64> = later
            .by_role
            .iter()
            .map(|(role, after)| (*role, (after - self.by_role.get(role).copied().unwrap_or(0.0)).max(0.0)))
            .collect();
        let ours: f64 = by_role.values().sum();
        CpuSnapshot {
            by_role,
            machine: (later.machine - self.machine - ours).max(0.0),
        }
    }

    pub fn get(&self, role: Role) -> Option<f64> {
        self.by_role.get(&role).copied()
    }

    /// All roles' CPU seconds.
    pub fn total(&self) -> f64 {
        self.by_role.values().sum()
    }

    /// CPU seconds of every other process on the machine (after `until`).
    pub fn others(&self) -> f64 {
        self.machine
    }
}

/// Waits, at most `limit`, until the machine has been nearly idle (under
/// `cores` busy) for a second: on a shared machine, other people's builds
/// would otherwise be measured too. Returns the last second's busy cores.
pub async fn wait_quiet(limit: Duration, cores: f64) -> f64 {
    let started = std::time::Instant::now();
    loop {
        let before = machine_busy_seconds().unwrap_or(0.0);
        let at = std::time::Instant::now();
        tokio::time::sleep(Duration::from_secs(1)).await;
        let busy = (machine_busy_seconds().unwrap_or(0.0) - before) / at.elapsed().as_secs_f64();
        if busy < cores || started.elapsed() >= limit {
            return busy;
        }
    }
}

/// Busy CPU seconds of the whole machine since boot (/proc/stat: all but idle and iowait).
fn machine_busy_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<f64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    let busy: f64 = fields.iter().take(8).sum::<f64>() - fields.get(3)? - fields.get(4)?;
    Some(busy / clock_ticks())
}

fn clock_ticks() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// utime + stime of a process (all its threads), in seconds.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 (utime) and 15 (stime) of proc(5); `rest` starts at field 3.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / clock_ticks())
}

/// Resident set size (VmRSS) of a process, in bytes.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    status_kb(pid, "VmRSS:").map(|kb| kb * 1024)
}

/// Peak resident set size (VmHWM) of a process, in bytes.
pub fn peak_rss_bytes(pid: u32) -> Option<u64> {
    status_kb(pid, "VmHWM:").map(|kb| kb * 1024)
}

fn status_kb(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].trim().trim_end_matches("kB").trim().parse().ok()
}
