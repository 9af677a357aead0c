//! What the throttled benchmark puts the daemon under (`throttled.rs`): a CPU
//! cgroup with a CFS quota (v1 `cpu.cfs_quota_us` at /sys/fs/cgroup/cpu, or
//! v2 `cpu.max` where the unified hierarchy has the cpu controller), and a
//! CPU hog (a busy process per core) beside it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, bail};

/// The CFS period: the kernel's default, and Kubernetes'.
pub const PERIOD_US: u64 = 100_000;

/// A CPU cgroup holding the daemon, removed on drop (the daemon is moved
/// back to the root first if it still runs).
pub struct Cgroup {
    dir: PathBuf,
    root: PathBuf,
}

impl Cgroup {
    /// A new cgroup limited to `cores` (a quota of `cores` × the period),
    /// holding process `pid` with all its threads.
    pub fn limit(pid: u32, cores: f64) -> anyhow::Result<Cgroup> {
        let (root, v2) = hierarchy().context("no CPU cgroup hierarchy to write (cgroup v1 /sys/fs/cgroup/cpu, or v2 with the cpu controller); run as root")?;
        let dir = root.join(format!("redlockd-bench-{}", std::process::id()));
        if !dir.exists() {
            std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let cgroup = Cgroup { dir, root };
        let quota = (cores * PERIOD_US as f64).round().max(1000.0) as u64;
        if v2 {
            cgroup.write("cpu.max", &format!("{quota} {PERIOD_US}"))?;
        } else {
            cgroup.write("cpu.cfs_period_us", &PERIOD_US.to_string())?;
            cgroup.write("cpu.cfs_quota_us", &quota.to_string())?;
        }
        cgroup.write("cgroup.procs", &pid.to_string())?;
        Ok(cgroup)
    }

    fn write(&self, file: &str, value: &str) -> anyhow::Result<()> {
        std::fs::write(self.dir.join(file), value)
            .with_context(|| format!("writing {value} to {}", self.dir.join(file).display()))
    }

    /// Periods so far and how many of them throttled the group.
    pub fn throttling(&self) -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string(self.dir.join("cpu.stat")).ok()?;
        let field = |name: &str| {
            stat.lines()
                .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
        };
        Some((field("nr_periods")?, field("nr_throttled")?))
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if let Ok(procs) = std::fs::read_to_string(self.dir.join("cgroup.procs")) {
            for pid in procs.split_whitespace() {
                let _ = std::fs::write(self.root.join("cgroup.procs"), pid);
            }
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Where a CPU quota can be set: cgroup v1's cpu hierarchy, or v2's root
/// when it has the cpu controller (`true`).
fn hierarchy() -> Option<(PathBuf, bool)> {
    let v1 = Path::new("/sys/fs/cgroup/cpu");
    if v1.join("cpu.cfs_quota_us").exists() || v1.join("cgroup.procs").exists() && v1.join("cpu.shares").exists() {
        return Some((v1.to_path_buf(), false));
    }
    for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
        let root = Path::new(root);
        let controllers = std::fs::read_to_string(root.join("cgroup.subtree_control")).unwrap_or_default();
        if controllers.split_whitespace().any(|c| c == "cpu") {
            return Some((root.to_path_buf(), true));
        }
    }
    None
}

/// A busy loop on every core (`stress-ng --cpu N`, or `sh` loops without
/// it), killed on drop.
pub struct Hog {
    children: Vec<Child>,
}

impl Hog {
    pub fn start() -> anyhow::Result<Hog> {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let stress = Command::new("stress-ng")
            .args(["--cpu", &cores.to_string(), "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let children = match stress {
            Ok(child) => vec![child],
            Err(_) => (0..cores)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .context("starting a busy loop")
                })
                .collect::<anyhow::Result<_>>()?,
        };
        if children.is_empty() {
            bail!("no hog started");
        }
        Ok(Hog { children })
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        for child in &mut self.children {
            // SIGTERM lets stress-ng stop its workers; then reap.
            let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
            let _ = child.wait();
        }
    }
}
