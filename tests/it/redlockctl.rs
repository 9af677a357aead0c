//! The real `redlockctl` against an in-process daemon and five real
//! masters: acquire, extend and release with their documented exit codes,
//! shared locks, permits and reentrancy, and `run` (the token and the exit
//! code passed on, the command stopped when the lock is lost, a killed
//! `run` freeing its lock at once). Its supervision of the command:
//! `redlockctl_run.rs`.

use std::process::Stdio;
use std::time::Duration;

use redlockd_client::proto::lock_client::LockClient;

use crate::support::*;

/// Runs redlockctl against `daemon`; returns (exit code, stdout, stderr).
async fn ctl(daemon: &Daemon, args: &[&str]) -> (i32, String, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_redlockctl"))
        .arg("--addr")
        .arg(format!("http://{}", daemon.addr))
        .args(args)
        .output()
        .await
        .expect("running redlockctl");
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

fn field<'a>(stdout: &'a str, key: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {key} in {stdout:?}"))
}

#[tokio::test]
async fn redlockctl_acquires_extends_and_releases_with_documented_exit_codes() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;

    let (code, out, _) = ctl(&daemon, &["acquire", "jobs/nightly", "--ttl", "10s"]).await;
    assert_eq!(code, 0, "{out}");
    let value = field(&out, "value").to_owned();
    let token: u64 = field(&out, "fencing_token").parse().unwrap();
    assert!(token > 0);

    let (code, out, _) = ctl(&daemon, &["acquire", "jobs/nightly", "--ttl", "10s"]).await;
    assert_eq!(code, 1, "a held lock must exit 1: {out}");
    assert!(out.contains("Taken"), "{out}");

    let (code, out, _) = ctl(&daemon, &["extend", "jobs/nightly", &value, "--ttl", "20s"]).await;
    assert_eq!(code, 0, "{out}");
    let (code, _, err) = ctl(&daemon, &["acquire", "jobs/other", "--ttl", "1ms"]).await;
    assert_eq!(code, 2);
    assert!(err.contains("ttl"), "{err}");

    let (code, out, _) = ctl(&daemon, &["inspect", "jobs/nightly"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("held=true agreeing=5 quorum=3"), "{out}");
    assert_eq!(
        out.lines().filter(|l| l.contains("with_majority=true")).count(),
        5,
        "{out}"
    );
    assert!(!out.contains(&value), "inspect printed the lock value");

    let (code, out, _) = ctl(&daemon, &["release", "jobs/nightly", &value]).await;
    assert_eq!((code, out.trim()), (0, "released=true"));
    let (code, out, _) = ctl(&daemon, &["release", "jobs/nightly", &value]).await;
    assert_eq!((code, out.trim()), (1, "released=false"));
    daemon.stop().await;
}

#[tokio::test]
async fn redlockctl_takes_shared_locks_permits_and_reentrant_locks() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    for _ in 0..2 {
        let (code, out, _) = ctl(&daemon, &["acquire", "books", "--shared"]).await;
        assert_eq!((code, field(&out, "mode")), (0, "shared"), "{out}");
    }
    let (code, out, _) = ctl(&daemon, &["inspect", "books"]).await;
    assert!(
        code == 0 && out.starts_with("held=true") && out.contains("readers=2"),
        "{out}"
    );
    let (code, _, _) = ctl(&daemon, &["acquire", "books"]).await;
    assert_eq!(code, 1, "a writer beside readers");

    let mut slots = Vec::new();
    for _ in 0..2 {
        let (code, out, _) = ctl(&daemon, &["acquire", "pool", "--permits", "2"]).await;
        assert_eq!((code, field(&out, "permits")), (0, "2"), "{out}");
        slots.push(field(&out, "slot").to_owned());
    }
    slots.sort();
    assert_eq!(slots, ["0", "1"]);
    let (code, out, _) = ctl(&daemon, &["inspect", "pool"]).await;
    assert!(code == 0 && out.contains("permits=2 permits_out=2"), "{out}");
    let (code, _, err) = ctl(&daemon, &["acquire", "pool", "--permits", "3"]).await;
    assert!(code == 2 && err.contains("FailedPrecondition"), "{err}");

    let key = ["acquire", "report", "--reentrancy-key", "job-7"];
    let (_, first, _) = ctl(&daemon, &key).await;
    let (code, again, _) = ctl(&daemon, &key).await;
    assert_eq!(code, 0, "{again}");
    assert_eq!(field(&first, "fencing_token"), field(&again, "fencing_token"));
    assert_eq!(field(&first, "value"), field(&again, "value"));
    daemon.stop().await;
}

/// Starts `redlockctl run` against `daemon` with `args` (no waiting).
fn ctl_run(daemon: &Daemon, args: &[&str]) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_redlockctl"))
        .arg("--addr")
        .arg(format!("http://{}", daemon.addr))
        .arg("run")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("running redlockctl run")
}

async fn held(client: &mut LockClient<tonic::transport::Channel>, resource: &str) -> bool {
    let request = redlockd_client::proto::InspectRequest {
        resource: resource.into(),
    };
    client.inspect(request).await.unwrap().into_inner().held
}

/// Waits until the pid file a command wrote names a process.
async fn read_pid(path: &std::path::Path) -> u32 {
    for _ in 0..200 {
        if let Some(pid) = std::fs::read_to_string(path).ok().and_then(|s| s.trim().parse().ok()) {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the command never wrote its pid");
}

#[tokio::test]
async fn redlockctl_run_passes_the_token_and_the_exit_code_and_releases_after() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let out = ctl_run(
        &daemon,
        &[
            "--resource",
            "job",
            "--ttl",
            "2s",
            "--",
            "sh",
            "-c",
            "echo token=$REDLOCKD_FENCING_TOKEN resource=$REDLOCKD_RESOURCE; exit 7",
        ],
    )
    .wait_with_output()
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(7),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token: u64 = field(&stdout, "token")
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(token > 0);
    assert!(stdout.contains("resource=job"), "{stdout}");
    // Released on exit: free at once although the TTL was 2 s.
    let mut client = daemon.client().await;
    let lease = must_acquire(&mut client, "job", 5.0, 0.0).await;
    assert!(lease.fencing_token > token);
    daemon.stop().await;
}

#[tokio::test]
async fn redlockctl_run_stops_its_command_when_the_lock_is_lost() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!("echo $$ > {}; exec sleep 60", pidfile.display());
    let child = ctl_run(
        &daemon,
        &[
            "--resource",
            "job",
            "--ttl",
            "1s",
            "--grace",
            "1s",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    let pid = read_pid(&pidfile).await;
    for i in 0..3 {
        cluster.masters[i].kill();
    }
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the command survived the lost lock"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn a_session_client_killed_with_kill_9_frees_its_lock_long_before_the_ttl() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!("echo $$ > {}; exec sleep 60", pidfile.display());
    let mut child = ctl_run(
        &daemon,
        &["--resource", "job", "--ttl", "30s", "--", "sh", "-c", &script],
    );
    let command_pid = read_pid(&pidfile).await;
    let mut client = daemon.client().await;
    assert!(held(&mut client, "job").await);
    child.kill().await.unwrap(); // SIGKILL: no release from the client
    // TTL 30 s: only the daemon noticing the broken stream frees it this soon.
    must_acquire(&mut client, "job", 5.0, 10.0).await;
    let _ = std::process::Command::new("kill")
        .args(["-9", &command_pid.to_string()])
        .status();
    daemon.stop().await;
}
