//! The unsafe controls of the fault suite (docs/safety.md#where-each-claim-is-tested): schedules that DO
//! break Redlock's mutual exclusion or token order, each paired with its
//! safe twin. The checker must report the violation in the control (the test
//! passes because it does) and nothing in the twin; the fenced store must
//! keep refusing the stale holder either way.
//!
//! In the twins the lost master stays quarantined through the whole split:
//! to rejoin it needs its counter repaired from a quorum of the OTHER
//! masters, and the second daemon reaches only two of them.

use crate::support;

use std::time::Duration;

use fred::prelude::{ClientLike, KeysInterface, Value};
use fred::types::{ClusterHash, CustomCommand};
use redlockd::dev::{RedisProcess, find_redis_server};
use support::history::{Report, ViolationKind};
use support::proxy::Mode;
use support::rig::{Held, Rig};

/// The holder's lease must outlive a master's restart and reconnection by a
/// wide margin, so a control's double grant does not depend on timing.
const LONG_TTL: Duration = Duration::from_secs(7);
const QUARANTINE_OFF: &[(&str, &str)] = &[
    ("REDLOCKD__SAFETY__QUARANTINE", "false"),
    ("REDLOCKD__LOCK__MAX_TTL", "8s"),
];
const QUARANTINE_ON: &[(&str, &str)] = &[("REDLOCKD__LOCK__MAX_TTL", "8s")];

/// Splits the cluster so two holders can only meet on master 0: the holder
/// (daemon 0) cannot reach D, E and takes the lock on A, B, C; `lose_a`
/// makes master A lose it; the second client (daemon 1) cannot reach B, C
/// and asks A, D, E. Both then write to the fenced store (second first).
/// Returns the report and whether the second client was granted.
async fn split_on_a(rig: &mut Rig, lose_a: impl AsyncFnOnce(&mut Rig)) -> (Report, Option<Held>, bool) {
    // Reset, not blackhole: a blackholed SET would land when healed.
    rig.links(0, &[3, 4], Mode::Reset);
    rig.links(1, &[1, 2], Mode::Reset);
    let mut holder = rig.client(0, "holder").await;
    // Waits a little: on a loaded machine one attempt can time out.
    let held = holder
        .acquire_ttl("r", LONG_TTL, Duration::from_secs(2))
        .await
        .expect("the holder gets A, B, C");

    lose_a(rig).await;

    let mut second = rig.client(1, "second").await;
    let granted = second.acquire_ttl("r", LONG_TTL, Duration::from_secs(6)).await;
    if let Some(g) = &granted {
        second.write_fenced(g, "second");
    }
    // The holder still believes in its lease if it is within validity.
    let holder_write = holder.write_fenced(&held, "holder");
    rig.heal_links();
    (rig.check("r", None), granted, holder_write)
}

async fn restart_a_empty(rig: &mut Rig) {
    rig.cluster.masters[0].restart_empty().unwrap();
}

#[tokio::test]
async fn control_restart_empty_without_quarantine_is_a_double_grant_the_checker_reports() {
    let mut rig = Rig::start(2, QUARANTINE_OFF).await;
    let (report, second, _) = split_on_a(&mut rig, restart_a_empty).await;
    assert!(second.is_some(), "the control did not produce a second grant");
    assert!(
        report.has(ViolationKind::Overlap),
        "the checker missed the double grant:\n{report}"
    );
    assert!(!report.has(ViolationKind::StaleAccepted), "{report}");
}

#[tokio::test]
async fn twin_restart_empty_with_quarantine_keeps_the_second_client_out() {
    let mut rig = Rig::start(2, QUARANTINE_ON).await;
    let (report, _, _) = split_on_a(&mut rig, restart_a_empty).await;
    report.assert_safe();
}

/// Emulates master A's clock jumping forward: its copy of the lock expires.
async fn jump_a_clock(rig: &mut Rig) {
    let admin = rig.cluster.admin(0).await;
    let _: i64 = admin.pexpire(support::keys::of("r"), 1, None).await.unwrap();
    let _ = admin.quit().await;
    tokio::time::sleep(Duration::from_millis(5)).await;
}

#[tokio::test]
async fn control_a_clock_jump_on_one_master_double_grants_yet_the_fenced_store_rejects_the_stale_holder() {
    let mut rig = Rig::start(2, QUARANTINE_OFF).await;
    let (report, second, holder_write) = split_on_a(&mut rig, jump_a_clock).await;
    assert!(second.is_some(), "the control did not produce a second grant");
    assert!(
        report.has(ViolationKind::Overlap),
        "the checker missed the double grant:\n{report}"
    );
    // The fencing token saves the resource: the stale holder is refused.
    assert!(!holder_write, "the fenced store accepted the stale holder");
    let rejected = rig.fenced.tamper(|s| s.rejected.len());
    assert_eq!(rejected, 1);
    assert!(
        !report.has(ViolationKind::StaleAccepted) && !report.has(ViolationKind::TokenOrder),
        "{report}"
    );
}

/// A replica of master A, promoted before the holder's lock reaches it,
/// then put in A's place behind both daemons' proxies (A is killed).
async fn fail_a_over(rig: &mut Rig, replica: &RedisProcess) {
    rig.cluster.masters[0].kill();
    for line in &rig.proxies {
        line[0].set_upstream(([127, 0, 0, 1], replica.port()).into());
        line[0].set_mode(Mode::Reset);
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    for line in &rig.proxies {
        line[0].set_mode(Mode::Pass);
    }
}

/// Starts a replica of master A and waits until it has copied A's data
/// (marker, counter), then promotes it: it misses everything after.
#[allow(
    clippy::disallowed_methods,
    reason = "waits on real redis-server processes, in real time"
)]
async fn promoted_replica(rig: &Rig) -> RedisProcess {
    // Full sync at once, not after the default 5 s wait for more replicas.
    rig.cluster.config_set(0, "repl-diskless-sync-delay", "0").await;
    let port = rig.cluster.masters[0].port().to_string();
    let replica = RedisProcess::start(&find_redis_server().unwrap(), &["--replicaof", "127.0.0.1", &port]).unwrap();
    let client = fred::prelude::Client::new(
        fred::prelude::Config::from_url(&replica.url()).unwrap(),
        None,
        None,
        None,
    );
    client.init().await.unwrap();
    // A full sync forks A; on a busy host that takes seconds, so wait on
    // the outcome (link up and the marker there), not a fixed time.
    let info = CustomCommand::new_static("INFO", ClusterHash::FirstKey, false);
    let start = std::time::Instant::now();
    let mut text = String::new();
    while start.elapsed() < Duration::from_secs(30) {
        text = client.custom(info.clone(), vec!["replication"]).await.unwrap();
        let marker: i64 = client.exists(support::keys::marker("lock:r")).await.unwrap();
        if text.contains("master_link_status:up") && marker == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let marker: i64 = client.exists(support::keys::marker("lock:r")).await.unwrap();
    assert_eq!(marker, 1, "the replica did not sync in 30 s:\n{text}");
    let promote = CustomCommand::new_static("REPLICAOF", ClusterHash::FirstKey, false);
    let _: Value = client.custom(promote, vec!["NO", "ONE"]).await.unwrap();
    let _ = client.quit().await;
    // Its first replica gave A a new master_replid (Redis does that when it
    // creates its replication backlog), which a daemon with quarantine on
    // takes for a failover: A is out for max_ttl. Wait until each daemon
    // has seen it (or 3 s passed: one without quarantine does not react),
    // then until A is usable again, so the split starts from A, B and C.
    for daemon in &rig.daemons {
        let quarantined = "redlock_node_state{node=\"0\",state=\"quarantined\"} 1";
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_secs(3) && !daemon.scrape().await.contains(quarantined) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        daemon.until_usable(5).await;
    }
    replica
}

#[tokio::test]
async fn control_failover_to_a_lagging_replica_without_quarantine_is_a_double_grant() {
    let mut rig = Rig::start(2, QUARANTINE_OFF).await;
    let replica = promoted_replica(&rig).await;
    let (report, second, _) = split_on_a(&mut rig, async |rig| fail_a_over(rig, &replica).await).await;
    assert!(second.is_some(), "the control did not produce a second grant");
    assert!(
        report.has(ViolationKind::Overlap),
        "the checker missed the double grant:\n{report}"
    );
}

#[tokio::test]
async fn twin_failover_with_quarantine_keeps_the_second_client_out() {
    let mut rig = Rig::start(2, QUARANTINE_ON).await;
    let replica = promoted_replica(&rig).await;
    let (report, _, _) = split_on_a(&mut rig, async |rig| fail_a_over(rig, &replica).await).await;
    report.assert_safe();
}

#[tokio::test]
async fn control_a_stalled_client_loses_an_update_on_an_unfenced_store_and_the_fenced_store_rejects_it() {
    let rig = Rig::start(1, &[]).await;
    let (mut slow, mut fast) = (rig.client(0, "slow").await, rig.client(0, "fast").await);
    let stale = slow.acquire("r", Duration::ZERO).await.expect("slow gets the lock");
    let read = rig.unfenced.read();
    // A GC pause longer than the TTL: the lock expires under the slow client.
    tokio::time::sleep(support::rig::TTL + Duration::from_millis(300)).await;
    let fresh = fast
        .acquire("r", Duration::from_secs(2))
        .await
        .expect("fast gets the expired lock");
    let v = rig.unfenced.read();
    rig.unfenced.write("fast", v + 1);
    assert!(rig.fenced.write("fast", fresh.token, "fast").is_ok());
    fast.release("r", &fresh).await;
    // The slow client wakes up and writes what it computed before the pause.
    rig.unfenced.write("slow", read + 1);
    let refused = rig.fenced.write("slow", stale.token, "slow");
    assert!(refused.is_err(), "the fenced store accepted a stale token");
    let report = rig.check("r", None);
    assert!(
        report.has(ViolationKind::LostWrite),
        "the checker missed the lost update:\n{report}"
    );
    assert_eq!(
        report.violations.len(),
        report.count(ViolationKind::LostWrite),
        "{report}"
    );
}
