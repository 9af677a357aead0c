//! `redlockctl run` and `elect` as supervisors (the real binary, real
//! processes): the lock is never free while any process of the command
//! still runs (docs/operations.md#redlockctl-run-and-elect). Each command
//! here has a SIGTERM trap and a grandchild; another client's Acquire (or
//! campaign) is judged by whether any of them is still there after it won.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use redlockd_client::{CampaignOptions, Client, Options};
use tokio::process::Child;
use tokio::time::Instant;

use crate::support::{Cluster, Daemon, try_acquire};

const CTL: &str = env!("CARGO_BIN_EXE_redlockctl");

/// A command's processes, as it wrote their ids and what its traps did.
struct Family {
    dir: tempfile::TempDir,
}

impl Family {
    fn new() -> Family {
        Family {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A `sh` script: writes its id to `leader`, starts a grandchild that
    /// writes `grandchild`, and on SIGTERM takes 1 s (the grandchild) or
    /// 0.2 s (itself) before writing `<name>-trapped` and exiting 0. Only
    /// shell builtins and /bin/sleep: it needs no PATH.
    fn script(&self) -> String {
        let write = |what: &str, name: &str| format!("echo {what} > {}", self.path(name).display());
        format!(
            "/bin/sh -c 'trap \"/bin/sleep 1; {grandchild_trapped}; exit 0\" TERM; {grandchild}; \
             while :; do /bin/sleep 0.05; done' & \
             trap '/bin/sleep 0.2; {leader_trapped}; exit 0' TERM; {leader}; \
             while :; do /bin/sleep 0.05; done",
            grandchild_trapped = write("yes", "grandchild-trapped"),
            grandchild = write("$$", "grandchild"),
            leader_trapped = write("yes", "leader-trapped"),
            leader = write("$$", "leader"),
        )
    }

    /// Waits until both processes wrote their ids.
    async fn started(&self) -> [u32; 2] {
        [
            read_pid(&self.path("leader")).await,
            read_pid(&self.path("grandchild")).await,
        ]
    }

    fn trapped(&self, who: &str) -> bool {
        self.path(&format!("{who}-trapped")).exists()
    }
}

/// Waits until `path` holds a process id.
async fn read_pid(path: &Path) -> u32 {
    for _ in 0..400 {
        if let Some(pid) = std::fs::read_to_string(path).ok().and_then(|s| s.trim().parse().ok()) {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{} was never written", path.display());
}

/// The ones of `pids` that still exist (a zombie not yet reaped counts).
fn still_there(pids: &[u32]) -> Vec<u32> {
    pids.iter()
        .copied()
        .filter(|pid| Path::new(&format!("/proc/{pid}")).exists())
        .collect()
}

fn ctl(daemon: &Daemon, args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(CTL);
    command
        .arg("--addr")
        .arg(format!("http://{}", daemon.addr))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

fn sigterm(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Tries to take `resource` every 20 ms until it is granted; asserts that
/// no process of `pids` is left once it is. Returns when it was granted.
async fn taken_only_once_they_are_gone(daemon: &Daemon, resource: &str, pids: &[u32], within: Duration) -> Instant {
    let mut client = daemon.client().await;
    let deadline = Instant::now() + within;
    loop {
        let granted = try_acquire(&mut client, resource, 10.0, 0.0).await.acquired;
        let left = still_there(pids);
        if granted {
            assert!(
                left.is_empty(),
                "{resource} was granted while {left:?} of the command still ran"
            );
            return Instant::now();
        }
        assert!(
            Instant::now() < deadline,
            "{resource} still held {within:?} on; left: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn ended(child: Child) -> (Option<i32>, String) {
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("redlockctl ended")
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test]
async fn run_keeps_the_lock_through_a_sigterm_until_every_process_of_the_command_is_gone() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let family = Family::new();
    let script = family.script();
    let args = [
        "run",
        "--resource",
        "jobs/y",
        "--ttl",
        "2s",
        "--grace",
        "10s",
        "--",
        "sh",
        "-c",
        &script,
    ];
    let child = ctl(&daemon, &args).spawn().unwrap();
    let pids = family.started().await;
    sigterm(child.id().unwrap());
    let sent = Instant::now();
    let taken = taken_only_once_they_are_gone(&daemon, "jobs/y", &pids, Duration::from_secs(15)).await;
    // The grandchild's trap takes 1 s: the lock waited for it, and was
    // released as soon as it was gone (not at the 2 s TTL's end or later).
    let waited = taken - sent;
    assert!(waited >= Duration::from_millis(900), "{waited:?}");
    let (code, stderr) = ended(child).await;
    assert_eq!(code, Some(0), "the command's own exit code: {stderr}");
    assert!(
        family.trapped("leader") && family.trapped("grandchild"),
        "SIGTERM reached the group"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn elect_keeps_the_leadership_through_a_sigterm_until_every_process_of_the_command_is_gone() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let client = Client::connect(&daemon.addr.to_string(), Options::default())
        .await
        .unwrap();
    let family = Family::new();
    let script = family.script();
    let args = [
        "elect", "jobs", "--ttl", "2s", "--grace", "10s", "--", "sh", "-c", &script,
    ];
    let child = ctl(&daemon, &args).spawn().unwrap();
    let pids = family.started().await;
    let next = client.campaign("jobs", "next", CampaignOptions::new().ttl(Duration::from_secs(2)));
    tokio::pin!(next);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut next)
            .await
            .is_err(),
        "elected while the first candidate led"
    );
    sigterm(child.id().unwrap());
    let next = tokio::time::timeout(Duration::from_secs(15), next)
        .await
        .expect("elected once the command was gone")
        .unwrap();
    let left = still_there(&pids);
    assert!(
        left.is_empty(),
        "the next candidate was elected while {left:?} still ran"
    );
    let (code, stderr) = ended(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        family.trapped("leader") && family.trapped("grandchild"),
        "SIGTERM reached the group"
    );
    next.resign().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn a_lost_lock_stops_the_whole_group_by_the_system_call_with_no_kill_on_path() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let family = Family::new();
    let script = family.script();
    let args = [
        "run",
        "--resource",
        "fragile",
        "--ttl",
        "1s",
        "--grace",
        "10s",
        "--",
        "/bin/sh",
        "-c",
        &script,
    ];
    let empty = tempfile::tempdir().unwrap();
    let child = ctl(&daemon, &args).env("PATH", empty.path()).spawn().unwrap();
    let pids = family.started().await;
    for i in 0..3 {
        cluster.kill(i);
    }
    let (code, stderr) = ended(child).await;
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("lock on fragile"), "{stderr}");
    assert!(
        family.trapped("leader"),
        "the command's SIGTERM trap never ran: {stderr}"
    );
    assert!(family.trapped("grandchild"), "the grandchild got no SIGTERM: {stderr}");
    assert_eq!(
        still_there(&pids),
        Vec::<u32>::new(),
        "redlockctl exited before its group was gone"
    );
    daemon.stop().await;
}

/// The processes whose parent is `parent` (from /proc), with their state
/// letter (`Z` for a zombie).
fn children_of(parent: u32) -> Vec<(u32, char)> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid …; comm may hold spaces and parentheses.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let pid = head.split_whitespace().next().and_then(|p| p.parse().ok());
        if let (Some(pid), Some(state), Some(ppid)) = (pid, fields.first(), fields.get(1))
            && ppid.parse::<u32>() == Ok(parent)
        {
            children.push((pid, state.chars().next().unwrap_or('?')));
        }
    }
    children
}

/// The id outside of the process that is `pid` in the PID namespace
/// `init` is PID 1 of.
fn host_pid(init: u32, pid: u32) -> u32 {
    let namespace = |p: u32| std::fs::read_link(format!("/proc/{p}/ns/pid")).ok();
    let ours = namespace(init).expect("init's namespace");
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(outside) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        // NSpid: the id in each namespace, outermost first.
        let ids = status
            .lines()
            .find_map(|line| line.strip_prefix("NSpid:"))
            .unwrap_or("");
        if ids.split_whitespace().last() == Some(&pid.to_string()) && namespace(outside).as_ref() == Some(&ours) {
            return outside;
        }
    }
    panic!("no process {pid} in the namespace of {init}");
}

#[tokio::test]
async fn as_pid_1_of_a_pid_namespace_run_reaps_orphans_and_a_sigterm_frees_the_lock_within_the_grace() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let family = Family::new();
    // An orphan first: a subshell starts a sleep and exits at once, so the
    // sleep is handed to PID 1, and ends 0.2 s later.
    let script = format!("( /bin/sleep 0.2 & ); {}", family.script());
    let addr = format!("http://{}", daemon.addr);
    let args = [
        "--pid",
        "--fork",
        "--kill-child",
        CTL,
        "--addr",
        &addr,
        "run",
        "--resource",
        "pid1",
        "--ttl",
        "2s",
        "--grace",
        "3s",
        "--",
        "sh",
        "-c",
        &script,
    ];
    let unshare = tokio::process::Command::new("unshare")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("unshare (util-linux) runs");
    // The ids the command wrote are the namespace's.
    let inside = family.started().await;
    // redlockctl, PID 1 inside, is the one child of unshare outside.
    let outer = unshare.id().unwrap();
    let children = children_of(outer);
    let [(init, _)] = children[..] else {
        panic!("unshare has one child: {children:?}");
    };
    let pids = inside.map(|pid| host_pid(init, pid));
    tokio::time::sleep(Duration::from_millis(600)).await;
    let zombies: Vec<u32> = children_of(init)
        .iter()
        .filter(|(_, s)| *s == 'Z')
        .map(|(p, _)| *p)
        .collect();
    assert!(zombies.is_empty(), "PID 1 left orphans unreaped: {zombies:?}");
    sigterm(init);
    let sent = Instant::now();
    let taken = taken_only_once_they_are_gone(&daemon, "pid1", &pids, Duration::from_secs(10)).await;
    assert!(
        taken - sent < Duration::from_secs(3),
        "freed {:?} after SIGTERM",
        taken - sent
    );
    let (code, stderr) = ended(unshare).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(family.trapped("leader") && family.trapped("grandchild"), "{stderr}");
    daemon.stop().await;
}

#[tokio::test]
async fn a_sigterm_while_waiting_for_the_lock_ends_run_before_the_command_starts() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let mut client = daemon.client().await;
    assert!(try_acquire(&mut client, "busy", 30.0, 0.0).await.acquired);
    let family = Family::new();
    let script = family.script();
    let args = ["run", "--resource", "busy", "--wait", "30s", "--", "sh", "-c", &script];
    let child = ctl(&daemon, &args).spawn().unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    sigterm(child.id().unwrap());
    let (code, stderr) = ended(child).await;
    assert_eq!(code, Some(143), "128 + SIGTERM: {stderr}");
    assert!(!family.path("leader").exists(), "the command ran");
    daemon.stop().await;
}

#[tokio::test]
async fn a_closed_stdout_ends_redlockctl_quietly_with_the_status_of_sigpipe() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    // `redlockctl acquire x | head -1` where head is gone before a line: a
    // pipe whose reading end is closed.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = ctl(&daemon, &["acquire", "piped", "--ttl", "2s"])
        .stdout(writer)
        .spawn()
        .unwrap()
        .wait_with_output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert_eq!(stderr, "", "a closed stdout is no error to report");
    daemon.stop().await;
}
