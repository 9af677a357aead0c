//! The real `redlockd` binary: bad config exits 64 naming the setting, and
//! `redlockd dev` (the quick-start command) serves locks against five local
//! masters it starts itself, and stops them on SIGTERM or SIGINT, quietly.

// The real binary runs on the wall clock: these tests time it with the std clock.
#![allow(clippy::disallowed_methods)]

use crate::support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use redlockd_client::proto::lock_client::LockClient;
use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_redlockd");

#[test]
fn a_bad_config_exits_64_and_names_the_setting() {
    let cases = [
        (vec![], "redis.nodes"),
        (
            vec![
                ("REDLOCKD__REDIS__NODES", "redis://a:1,redis://b:2,redis://c:3"),
                ("REDLOCKD__LOCK__DRIFT_FACTOR", "2"),
            ],
            "lock.drift_factor",
        ),
        (
            vec![
                ("REDLOCKD__REDIS__NODES", "redis://a:1,redis://b:2,redis://c:3"),
                ("REDLOCKD__SERVER__LISTEN", "nowhere"),
            ],
            "listen",
        ),
        // Read before the runtime starts, without redis.nodes.
        (vec![("REDLOCKD__SERVER__WORKER_THREADS", "many")], "worker_threads"),
        (
            vec![("REDLOCKD__SERVER__WORKER_THREADS", "100")],
            "server.worker_threads (100)",
        ),
    ];
    for (env, setting) in cases {
        let out = Command::new(BIN)
            .env_clear()
            .envs(env)
            .output()
            .expect("running redlockd");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{stderr}");
        assert!(stderr.contains(setting), "{stderr:?} does not name {setting}");
    }
}

#[test]
fn a_config_file_that_does_not_exist_is_a_config_error() {
    let out = Command::new(BIN)
        .args(["--config", "/nonexistent/redlockd.toml"])
        .output()
        .expect("running redlockd");
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/redlockd.toml"));
}

#[tokio::test]
async fn redlockd_dev_serves_locks_and_stops_its_masters_on_sigterm() {
    // The test keeps its connection open: the grace bounds the exit.
    dev_serves_locks_and_stops_its_masters_quietly_on("TERM", true).await;
}

#[tokio::test]
async fn redlockd_dev_stopped_with_ctrl_c_stops_its_masters_quietly() {
    dev_serves_locks_and_stops_its_masters_quietly_on("INT", false).await;
}

/// `redlockd dev` serves a lock, and on SIG`signal` exits 0, its masters gone and its log quiet from the stop on:
/// its own Redis clients stop before its masters do, so none logs a connection closing. A client that `stays`
/// connected is told of once, when the grace period ends.
async fn dev_serves_locks_and_stops_its_masters_quietly_on(signal: &str, stays: bool) {
    let port = redlockd::dev::free_port().unwrap();
    let child = Command::new(BIN)
        .arg("dev")
        .env("REDLOCKD__SERVER__LISTEN", format!("127.0.0.1:{port}"))
        .env("REDLOCKD__METRICS__LISTEN", "127.0.0.1:0")
        .env("REDLOCKD__LOG__FORMAT", "json")
        .env("REDLOCKD__SERVER__SHUTDOWN_GRACE", "1s")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting redlockd dev");

    let start = Instant::now();
    let mut client = loop {
        if let Ok(client) = LockClient::connect(format!("http://127.0.0.1:{port}")).await {
            break client;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "redlockd dev did not start serving"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let lease = must_acquire(&mut client, "quickstart", 10.0, 5.0).await;
    let masters = children_of(child.id());
    assert!(release(&mut client, &lease).await);
    if !stays {
        drop(client);
    }

    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap()
            .success()
    );
    // Waited for off the runtime, which keeps serving the client's end.
    let out = tokio::task::spawn_blocking(|| child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(out.status.success(), "exit status {:?}", out.status);
    let log = String::from_utf8_lossy(&out.stderr);
    // JSON lines, and the lock value never among them.
    assert!(log.lines().all(|l| l.starts_with('{')), "{log}");
    assert!(!log.contains(&lease.value));
    let stop = log
        .find(&format!("SIG{signal}: shutting down"))
        .expect("the stop is logged");
    let stopping = &log[stop..];
    let expected = |line: &str| stays && line.contains("shutdown grace period over");
    assert!(
        !stopping.contains("Connection closed")
            && stopping
                .lines()
                .all(|line| !line.contains(r#""level":"WARN""#) || expected(line)),
        "a clean stop logged warnings: {stopping}"
    );
    // The masters it started are gone.
    assert_eq!(masters.len(), 5, "redlockd dev did not start five masters");
    for pid in masters {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "master {pid} survived"
        );
    }
}

/// The pids of the direct children of `parent`, from /proc.
fn children_of(parent: u32) -> Vec<u32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces, so split after ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1));
        if ppid == Some(parent.to_string().as_str()) {
            children.push(pid);
        }
    }
    children
}

#[tokio::test]
async fn sigterm_releases_the_locks_of_open_sessions_and_exits_0_within_the_grace() {
    use redlockd_client::proto::{HoldEvent, HoldRequest, HoldStart, hold_request};
    let cluster = Cluster::start(5);
    let mut env = test_env(&cluster);
    env.insert("REDLOCKD__SERVER__SHUTDOWN_GRACE".into(), "3s".into());
    let mut daemon = support::rig::BinaryDaemon::start(env).await;
    let mut client = LockClient::connect(format!("http://{}", daemon.addr)).await.unwrap();
    let (tx, requests) = tokio::sync::mpsc::channel(1);
    let start = HoldStart {
        resource: "term".into(),
        ttl: secs(30.0),
        ..HoldStart::default()
    };
    tx.send(HoldRequest {
        request: Some(hold_request::Request::Start(start)),
    })
    .await
    .unwrap();
    let mut events = client
        .hold(tokio_stream::wrappers::ReceiverStream::new(requests))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(events.message().await.unwrap().unwrap().event(), HoldEvent::Acquired);

    let started = std::time::Instant::now();
    let status = daemon
        .terminate(Duration::from_secs(10))
        .await
        .expect("redlockd did not exit");
    assert!(status.success(), "{status:?}");
    // The grace is 3 s; the session released at once, so well within it.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    let released = events.message().await.unwrap().unwrap();
    assert_eq!(released.event(), HoldEvent::Released, "{released:?}");
    assert!(released.reason.contains("shutting down"));
    // The key is gone from every master (TTL 30 s: only the release did it).
    for i in 0..5 {
        let admin = cluster.admin(i).await;
        let exists: i64 = fred::prelude::KeysInterface::exists(&admin, support::keys::of("term"))
            .await
            .unwrap();
        assert_eq!(exists, 0, "master {i} still holds the session's lock");
    }
    drop(tx);
}

#[tokio::test]
async fn a_sigterm_during_start_up_still_stops_the_dev_masters() {
    let port = redlockd::dev::free_port().unwrap();
    let mut child = Command::new(BIN)
        .arg("dev")
        .env("REDLOCKD__SERVER__LISTEN", format!("127.0.0.1:{port}"))
        .env("REDLOCKD__METRICS__LISTEN", "127.0.0.1:0")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting redlockd dev");
    // As soon as the five masters exist, before it serves.
    let start = Instant::now();
    let masters = loop {
        let masters = children_of(child.id());
        if masters.len() == 5 {
            break masters;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "the masters never started");
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    for pid in masters {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "master {pid} survived"
        );
    }
}

/// A release is answered at quorum; a SIGTERM right after it loses none of
/// the deletes still on their way to the slower masters. Here they are
/// held on a dead link to two masters whose script caches were flushed:
/// they land only if the daemon is still there, carrying them, to answer
/// NOSCRIPT when the link heals. (What shutdown waits for, `settled`, is
/// tested on its own in `scripts.rs`: here other steps of the shutdown
/// also wait on the dead link.)
#[tokio::test]
async fn sigterm_waits_for_the_deletes_a_release_left_on_their_way() {
    use fred::prelude::KeysInterface;
    use support::proxy::Mode;
    let cluster = Cluster::start(5);
    let (mut env, proxies) = env_with_proxies(&cluster, 3).await;
    env.insert("REDLOCKD__SERVER__SHUTDOWN_GRACE".into(), "20s".into());
    env.insert("REDLOCKD__REDIS__COMMAND_TIMEOUT".into(), "20s".into());
    let mut daemon = support::rig::BinaryDaemon::start(env).await;
    let mut client = LockClient::connect(format!("http://{}", daemon.addr)).await.unwrap();
    let lease = must_acquire(&mut client, "r", 30.0, 0.0).await;

    let admins = cut_and_flush_scripts(&cluster, &proxies, 3).await;
    assert!(release(&mut client, &lease).await, "three masters held the lock");
    let terminating = tokio::spawn(async move {
        let status = daemon.terminate(Duration::from_secs(60)).await;
        (daemon, status)
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    for proxy in &proxies {
        proxy.set_mode(Mode::Pass);
    }
    let (_daemon, status) = terminating.await.unwrap();
    let status = status.expect("redlockd did not exit");
    assert!(status.success(), "{status:?}");
    for admin in &admins {
        let held: Option<String> = admin.get(support::keys::of("r")).await.unwrap();
        assert_eq!(
            held, None,
            "the daemon exited before its delete landed on a slow master"
        );
    }
}
