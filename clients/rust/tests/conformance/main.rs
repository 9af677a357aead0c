//! The conformance scenarios (clients/conformance/README.md): the calls,
//! read from `../conformance/scenarios/*.json`, that every client plays
//! against a real daemon with five masters. One line per scenario on
//! stdout: `PASS id`, `SKIP id: why` or `FAIL id: why`.
//!
//! Without `REDLOCKD_ADDR` each test runs itself again under
//! `scripts/with-dev-daemon` (so the workspace's test pass plays them);
//! the scenarios that kill masters each get a daemon of their own. The
//! calls are in `calls.rs`, the values and expectations in `values.rs`.

mod calls;
mod sessions;
mod values;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use redlockd_client::Client;
use serde_json::Value;

use calls::Run;

struct Scenario {
    id: String,
    own_daemon: bool,
    steps: Vec<Value>,
}

/// Why a scenario stopped before its end.
pub enum Stop {
    Fail(String),
    Skip(String),
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scenarios() -> Vec<Scenario> {
    // REDLOCKD_CONFORMANCE_SCENARIOS: another directory of files (to see the
    // runner fail on a planted wrong expectation, say).
    let dir = std::env::var_os("REDLOCKD_CONFORMANCE_SCENARIOS")
        .map_or_else(|| repository().join("clients/conformance/scenarios"), PathBuf::from);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut all = Vec::new();
    for file in files {
        let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for s in doc["scenarios"].as_array().expect("a list of scenarios") {
            let needs = s["needs"].as_array().cloned().unwrap_or_default();
            all.push(Scenario {
                id: s["id"].as_str().expect("an id").to_owned(),
                own_daemon: needs.iter().any(|n| n == "own-daemon"),
                steps: s["steps"].as_array().expect("steps").clone(),
            });
        }
    }
    assert!(all.len() >= 60, "{} scenarios: the files hold more", all.len());
    all
}

/// Runs `test` of this binary again under scripts/with-dev-daemon.
fn under_dev_daemon(test: &str, scenario: Option<&str>) {
    let exe = std::env::current_exe().unwrap();
    let mut command = Command::new(repository().join("scripts/with-dev-daemon"));
    command
        .arg(&exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"]);
    // The daemon this build made (<target>/debug/redlockd beside deps/).
    if let Some(daemon) = exe.parent().and_then(Path::parent).map(|debug| debug.join("redlockd"))
        && daemon.exists()
        && std::env::var_os("REDLOCKD_BIN").is_none()
    {
        command.env("REDLOCKD_BIN", daemon);
    }
    if let Some(id) = scenario {
        command.env("REDLOCKD_CONFORMANCE_SCENARIO", id);
    }
    let status = command.status().expect("scripts/with-dev-daemon runs");
    assert!(status.success(), "{test} {scenario:?} under with-dev-daemon: {status}");
}

/// Plays `scenarios` one after another on the daemon at REDLOCKD_ADDR; the
/// ids of those that failed.
fn play_all(scenarios: &[&Scenario]) -> Vec<String> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = Client::from_env().await.expect("a daemon at REDLOCKD_ADDR");
        let mut failed = Vec::new();
        for s in scenarios {
            let mut run = Run::new(client.clone());
            // No call waits past this (a campaign without a wait waits until elected).
            let played = tokio::time::timeout(Duration::from_secs(60), run.play(&s.steps)).await;
            match played.unwrap_or_else(|_| Err(Stop::Fail("still running after 60 s".into()))) {
                Ok(()) => println!("PASS {}", s.id),
                Err(Stop::Skip(why)) => println!("SKIP {}: {why}", s.id),
                Err(Stop::Fail(why)) => {
                    println!("FAIL {}: {why}", s.id);
                    failed.push(s.id.clone());
                }
            }
            run.close().await;
        }
        failed
    })
}

#[test]
fn plays_every_scenario_that_shares_a_daemon() {
    if std::env::var_os("REDLOCKD_ADDR").is_none() {
        return under_dev_daemon("plays_every_scenario_that_shares_a_daemon", None);
    }
    let all = scenarios();
    let shared: Vec<&Scenario> = all.iter().filter(|s| !s.own_daemon).collect();
    let failed = play_all(&shared);
    assert!(failed.is_empty(), "failed: {failed:?}");
}

#[test]
fn plays_each_scenario_that_kills_masters_on_a_daemon_of_its_own() {
    let all = scenarios();
    match std::env::var("REDLOCKD_CONFORMANCE_SCENARIO") {
        Ok(id) => {
            let one: Vec<&Scenario> = all.iter().filter(|s| s.id == id && s.own_daemon).collect();
            assert_eq!(one.len(), 1, "no scenario {id} needs a daemon of its own");
            let failed = play_all(&one);
            assert!(failed.is_empty(), "failed: {failed:?}");
        }
        Err(_) => {
            let own: Vec<&Scenario> = all.iter().filter(|s| s.own_daemon).collect();
            assert!(own.len() >= 2, "{} scenarios kill masters, not 2", own.len());
            for s in own {
                under_dev_daemon(
                    "plays_each_scenario_that_kills_masters_on_a_daemon_of_its_own",
                    Some(&s.id),
                );
            }
        }
    }
}
