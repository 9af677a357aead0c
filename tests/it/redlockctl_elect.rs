//! `redlockctl elect`, `leader`, `observe` and `watch` (the real binary)
//! against an in-process daemon and five real masters: the elected command
//! gets its term and a second candidate's waits until the first ends; a
//! lost leadership stops the command and exits 3; a killed one keeps the
//! election for its lock delay; leader, observe and watch print fields, or
//! JSON with terms and tokens as decimal strings.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use redlockd_client::{AcquireOptions, CampaignOptions, Client, Options};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout};

use crate::client_elections::leader_of;
use crate::support::{Cluster, Daemon, keys};

const CTL: &str = env!("CARGO_BIN_EXE_redlockctl");

/// `redlockctl --addr <daemon> ARGS…`, started, its stdout piped.
fn spawn(daemon: &Daemon, args: &[&str]) -> Child {
    tokio::process::Command::new(CTL)
        .arg("--addr")
        .arg(format!("http://{}", daemon.addr))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("running redlockctl")
}

/// Runs redlockctl to the end: (exit code, stdout). A read of the masters
/// that found no majority (exit 2, UNAVAILABLE: the tests' 100 ms node
/// timeout on a loaded machine) is run again, up to five times.
async fn ctl(daemon: &Daemon, args: &[&str]) -> (i32, String) {
    for _ in 0..5 {
        let out = spawn(daemon, args).wait_with_output().await.unwrap();
        let code = out.status.code().unwrap_or(-1);
        if code == 2 && String::from_utf8_lossy(&out.stderr).contains("unavailable") {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        return (code, String::from_utf8_lossy(&out.stdout).into_owned());
    }
    panic!("{args:?}: five reads without a majority");
}

/// A running `observe` or `watch`, and the lines it prints.
struct Follower {
    _child: Child,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Follower {
    /// Starts it and reads its first line. A first read without a majority
    /// is an error by design (the test's 100 ms node timeout on a loaded
    /// machine can cause one): start it again.
    async fn start(daemon: &Daemon, args: &[&str]) -> (Follower, String) {
        for _ in 0..5 {
            let mut child = spawn(daemon, args);
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            if let Some(first) = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
                .await
                .expect("a first line in time")
                .unwrap()
            {
                return (Follower { _child: child, lines }, first);
            }
            let out = child.wait_with_output().await.unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("unavailable"), "{args:?} printed nothing: {stderr}");
        }
        panic!("{args:?}: five first reads without a majority");
    }

    /// The next line holding `text`.
    async fn until(&mut self, text: &str) -> String {
        loop {
            let line = self.next().await;
            if line.contains(text) {
                return line;
            }
        }
    }

    async fn next(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(3), self.lines.next_line())
            .await
            .expect("a line in time")
            .unwrap()
            .expect("still running")
    }
}

fn json(line: &str) -> serde_json::Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?} is not JSON: {e}"))
}

/// Waits until a command wrote `path` (written whole: moved into place).
async fn read_when_written(path: &Path) -> String {
    for _ in 0..400 {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text.trim().to_owned();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{} was never written", path.display());
}

/// A shell line that writes `what` to `path` whole.
fn write(what: &str, path: &Path) -> String {
    let path = path.display();
    format!("echo {what} > {path}.tmp && mv {path}.tmp {path}")
}

#[tokio::test]
async fn elect_runs_its_command_with_the_term_and_a_second_waits_until_the_first_ends() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let client = Client::connect(&daemon.addr.to_string(), Options::default())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (first_out, second_out, go) = (
        dir.path().join("first"),
        dir.path().join("second"),
        dir.path().join("go"),
    );
    let script = format!(
        "{}; while [ ! -e {} ]; do sleep 0.05; done; exit 4",
        write("$REDLOCKD_TERM,$REDLOCKD_ELECTION", &first_out),
        go.display()
    );
    let first = spawn(
        &daemon,
        &[
            "elect", "jobs", "--value", "one", "--ttl", "2s", "--", "sh", "-c", &script,
        ],
    );
    let pid = first.id().unwrap();
    let written = read_when_written(&first_out).await;
    let (term, election) = written.split_once(',').unwrap();
    let term: u64 = term.parse().unwrap();
    assert_eq!(election, "jobs");
    let leader = leader_of(&client, "jobs").await.expect("a leader");
    assert_eq!(leader.term, term, "REDLOCKD_TERM is the term");
    assert!(leader.candidate.ends_with(&format!("/{pid}")), "{}", leader.candidate);
    assert_eq!(leader.value, b"one");

    let script = write("$REDLOCKD_TERM", &second_out);
    let second = spawn(
        &daemon,
        &["elect", "jobs", "--candidate", "second", "--", "sh", "-c", &script],
    );
    for _ in 0..100 {
        if client.participants("jobs").await.unwrap() == ["second"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(client.participants("jobs").await.unwrap(), ["second"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!second_out.exists(), "the second command ran while the first led");

    std::fs::write(&go, "").unwrap();
    let out = tokio::time::timeout(Duration::from_secs(10), first.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let out = tokio::time::timeout(Duration::from_secs(10), second.wait_with_output())
        .await
        .expect("the second elected once the first ended")
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let next: u64 = read_when_written(&second_out).await.parse().unwrap();
    assert!(next > term, "{next} > {term}");
    // Each resigned when its command ended.
    assert_eq!(leader_of(&client, "jobs").await, None);
    daemon.stop().await;
}

#[tokio::test]
async fn elect_stops_its_command_and_exits_3_when_the_leadership_is_lost() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!("{}; exec sleep 60", write("$$", &pidfile));
    let args = [
        "elect", "fragile", "--ttl", "1s", "--grace", "1s", "--", "sh", "-c", &script,
    ];
    let child = spawn(&daemon, &args);
    let pid = read_when_written(&pidfile).await;
    for i in 0..3 {
        cluster.kill(i);
    }
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("redlockctl elect ended")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("leadership of fragile ended"), "{stderr}");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the command survived the lost leadership"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn an_elect_killed_with_kill_9_keeps_the_election_for_its_lock_delay() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let client = Client::connect(&daemon.addr.to_string(), Options::default())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!("{}; exec sleep 60", write("$$", &pidfile));
    let args = [
        "elect",
        "cron",
        "--ttl",
        "2s",
        "--lock-delay",
        "3s",
        "--",
        "sh",
        "-c",
        &script,
    ];
    let mut child = spawn(&daemon, &args);
    let command = read_when_written(&pidfile).await;
    child.kill().await.unwrap(); // SIGKILL: no resignation
    let killed = tokio::time::Instant::now();
    let next = client.campaign("cron", "next", CampaignOptions::new().ttl(Duration::from_secs(2)));
    let next = tokio::time::timeout(Duration::from_secs(15), next)
        .await
        .unwrap()
        .unwrap();
    let took = killed.elapsed();
    assert!(
        took >= Duration::from_millis(2900),
        "elected {took:?} after a kill -9, inside the lock delay"
    );
    next.resign().await.unwrap();
    let _ = std::process::Command::new("kill").args(["-9", &command]).status();
    daemon.stop().await;
}

#[tokio::test]
async fn leader_and_observe_print_the_leader_with_its_exact_term() {
    let cluster = Cluster::start(5);
    // Terms above 2^53 (a double cannot hold them): the election's counter
    // set high on every master.
    for i in 0..5 {
        let admin = cluster.admin(i).await;
        let counter: u64 = (1 << 53) / 16 + 12_345;
        let _: () = fred::prelude::KeysInterface::set(&admin, keys::fence("election:cron"), counter, None, None, false)
            .await
            .unwrap();
    }
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let client = Client::connect(&daemon.addr.to_string(), Options::default())
        .await
        .unwrap();
    assert_eq!(ctl(&daemon, &["leader", "cron"]).await, (1, "elected=false\n".into()));
    assert_eq!(
        ctl(&daemon, &["leader", "cron", "--json"]).await,
        (1, "{\"elected\":false}\n".into())
    );
    let (mut fields, first) = Follower::start(&daemon, &["observe", "cron"]).await;
    assert_eq!(first, "elected=false");
    let (mut objects, first) = Follower::start(&daemon, &["observe", "cron", "--json"]).await;
    assert_eq!(json(&first), serde_json::json!({"elected": false}));

    let options = CampaignOptions::new()
        .value("10.0.0.1 \"a\"")
        .ttl(Duration::from_secs(2));
    let leading = client.campaign("cron", "a", options).await.unwrap();
    let term = leading.term();
    assert!(term > 1 << 53, "{term}");
    // Past any state of an earlier grant the daemon let go (see
    // client_elections::observe_follows_the_leader_and_watch_the_holder).
    let line = fields.until(&format!(" term={term} ")).await;
    let want = format!("elected=true candidate=\"a\" term={term} value=\"10.0.0.1 \\\"a\\\"\" since_ms=");
    assert!(line.starts_with(&want), "{line}");
    let seen = json(&objects.until(&format!("\"term\":\"{term}\"")).await);
    assert_eq!(seen["term"], serde_json::json!(term.to_string()));
    assert_eq!(
        (seen["candidate"].as_str(), seen["value"].as_str()),
        (Some("a"), Some("10.0.0.1 \"a\""))
    );
    assert!(seen["since_ms"].as_u64().is_some_and(|ms| ms > 0), "{seen}");

    let (code, out) = ctl(&daemon, &["leader", "cron"]).await;
    assert!(code == 0 && out.starts_with(&want), "{out}");
    let (code, out) = ctl(&daemon, &["leader", "cron", "--json"]).await;
    assert_eq!((code, &json(&out)["term"]), (0, &serde_json::json!(term.to_string())));

    leading.resign().await.unwrap();
    assert_eq!(fields.next().await, "elected=false");
    assert_eq!(json(&objects.next().await)["elected"], serde_json::json!(false));
    daemon.stop().await;
}

#[tokio::test]
async fn watch_prints_each_change_of_a_lock() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let client = Client::connect(&daemon.addr.to_string(), Options::default())
        .await
        .unwrap();
    let (mut fields, first) = Follower::start(&daemon, &["watch", "w"]).await;
    assert_eq!(first, "event=current held=false readers=0 permits=0 permits_out=0");
    let (mut objects, first) = Follower::start(&daemon, &["watch", "w", "--json"]).await;
    assert_eq!(
        json(&first),
        serde_json::json!({"event": "current", "held": false, "readers": 0, "permits": 0, "permits_out": 0})
    );

    let taken = AcquireOptions::new().ttl(Duration::from_secs(10)).owner("worker 1");
    let lease = client.acquire("w", taken).await.unwrap().expect("free");
    let line = fields.next().await;
    assert!(
        line.starts_with("event=acquired held=true owner=\"worker 1\" tenant=\"\" daemon="),
        "{line}"
    );
    let seen = json(&objects.next().await);
    assert_eq!(
        (seen["event"].as_str(), seen["owner"].as_str()),
        (Some("acquired"), Some("worker 1"))
    );
    let token: u64 = seen["fencing_token"].as_str().expect("a string").parse().unwrap();
    assert!(token >= lease.fencing_token());
    assert!(line.contains(&format!(" fencing_token={token} ")), "{line}");

    assert!(lease.release().await.unwrap());
    assert!(
        fields
            .next()
            .await
            .starts_with("event=released held=false owner=\"worker 1\"")
    );
    assert_eq!(json(&objects.next().await)["event"], serde_json::json!("released"));
    daemon.stop().await;
}
