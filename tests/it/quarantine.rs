//! Preflight and quarantine against real masters (docs/design.md#quarantine): evicting
//! masters are not used; a fresh or restarted master waits `max_ttl`, then
//! rejoins with its fence counter repaired from a quorum of the others.

use crate::support;

use std::time::Duration;

use fred::prelude::{ClientLike, KeysInterface};
use support::*;
use tonic::Code;

const MAX_TTL: Duration = Duration::from_secs(2);

fn quarantine_env(cluster: &Cluster) -> std::collections::HashMap<String, String> {
    let mut env = test_env(cluster);
    for (k, v) in [
        ("REDLOCKD__SAFETY__QUARANTINE", "true"),
        ("REDLOCKD__SAFETY__CHECK_INTERVAL", "100ms"),
        ("REDLOCKD__LOCK__MAX_TTL", "2s"),
        ("REDLOCKD__LOCK__DEFAULT_TTL", "1s"),
    ] {
        env.insert(k.into(), v.into());
    }
    env
}

async fn holds(cluster: &Cluster, i: usize, resource: &str) -> bool {
    let admin = cluster.admin(i).await;
    let n: i64 = admin.exists(support::keys::of(resource)).await.unwrap();
    let _ = admin.quit().await;
    n == 1
}

#[tokio::test]
async fn masters_with_an_evicting_policy_are_refused_at_preflight() {
    let cluster = Cluster::start(5);
    for i in 0..3 {
        cluster.config_set(i, "maxmemory-policy", "allkeys-lru").await;
    }
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    // All five answer, but only two may be used: no quorum.
    let status = client.acquire(acquire_req("r", 5.0, 0.0)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    // The reason is exported, per master, once each has been probed.
    let series: Vec<String> = [(0, 1), (2, 1), (3, 0)]
        .iter()
        .map(|(node, failed)| {
            format!("redlock_node_preflight_failed{{check=\"maxmemory_policy\",node=\"{node}\"}} {failed}")
        })
        // Every master starts out exported as unverified: these two show
        // that the probes have run.
        .chain(["3", "4"].map(|node| format!("redlock_node_state{{node=\"{node}\",state=\"usable\"}} 1")))
        .collect();
    daemon
        .scrape_until(&series.iter().map(String::as_str).collect::<Vec<_>>())
        .await;

    // Fixing one master brings it back at the next probe.
    cluster.config_set(0, "maxmemory-policy", "noeviction").await;
    let lease = must_acquire(&mut client, "r", 5.0, 3.0).await;
    assert!(holds(&cluster, 0, "r").await);
    assert!(!holds(&cluster, 1, "r").await, "an evicting master was used");
    assert!(release(&mut client, &lease).await);
    daemon.stop().await;
}

#[tokio::test]
async fn a_new_cluster_grants_its_first_lock_only_after_max_ttl() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start_with(quarantine_env(&cluster)).await;
    let mut client = daemon.client().await;
    let status = client.acquire(acquire_req("first", 1.0, 0.0)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    must_acquire(&mut client, "first", 1.0, 10.0).await;
    daemon.stop().await;
}

#[tokio::test]
async fn a_master_restarted_empty_is_quarantined_then_rejoins_with_a_repaired_counter() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start_with(quarantine_env(&cluster)).await;
    let mut client = daemon.client().await;
    let first = must_acquire(&mut client, "r", 1.0, 10.0).await;
    assert!(release(&mut client, &first).await);

    // Far above any clock seed (2^52 µs is year 2112): only a repair from
    // the other nodes can bring master 0 up to it.
    let high: u64 = 1 << 52;
    for i in 1..5 {
        let admin = cluster.admin(i).await;
        let _: () = admin
            .set(support::keys::fence("lock:r"), high, None, None, false)
            .await
            .unwrap();
    }
    cluster.masters[0].restart_empty().unwrap();

    // While quarantined, master 0 is not asked at all.
    let during = must_acquire(&mut client, "r", 1.0, 5.0).await;
    assert!(
        !holds(&cluster, 0, "r").await,
        "a quarantined master took part in a grant"
    );
    assert!(release(&mut client, &during).await);

    // After max_ttl it rejoins (once repair has read 16,384 buckets of the
    // others), its counter repaired to at least the others'.
    tokio::time::sleep(MAX_TTL).await;
    daemon.until_usable(5).await;
    let after = must_acquire(&mut client, "r", 1.0, 5.0).await;
    assert!(holds(&cluster, 0, "r").await, "master 0 did not rejoin");
    let fence0: u64 = cluster.fence(0, "r").await.unwrap().parse().unwrap();
    assert!(
        fence0 > high,
        "master 0's counter {fence0} was not repaired above {high}"
    );
    assert!(after.fencing_token > during.fencing_token);
    daemon.stop().await;
}

/// Every master restarted empty right after a grant, with a `max_ttl`
/// shorter than a seed window: the counters seeded again from the clocks
/// must lie above the token handed out before, so the masters are held out
/// for two seconds whatever `max_ttl` says (docs/design.md#the-fencing-token). The
/// grant before is taken at the start of a seed window, so that a hold of
/// `max_ttl` alone would seed again inside the same window.
#[tokio::test]
async fn masters_restarted_empty_together_are_held_until_their_seeds_lie_above_every_token() {
    let mut cluster = Cluster::start(5);
    let mut env = quarantine_env(&cluster);
    for (k, v) in [
        ("REDLOCKD__SAFETY__CHECK_INTERVAL", "50ms"),
        ("REDLOCKD__REDIS__NODE_TIMEOUT", "50ms"),
        ("REDLOCKD__LOCK__MIN_TTL", "250ms"),
        ("REDLOCKD__LOCK__DEFAULT_TTL", "250ms"),
        ("REDLOCKD__LOCK__MAX_TTL", "250ms"),
    ] {
        env.insert(k.into(), v.into());
    }
    let daemon = Daemon::start_with(env).await;
    let mut client = daemon.client().await;
    must_acquire(&mut client, "warm-up", 0.25, 10.0).await;

    const WINDOW: u64 = 1 << 20;
    let into_window = cluster.clock_us(0).await % WINDOW;
    tokio::time::sleep(Duration::from_micros(WINDOW - into_window + 5_000)).await;
    let before = must_acquire(&mut client, "r", 0.25, 0.0).await;
    assert!(release(&mut client, &before).await);
    for i in 0..5 {
        cluster.restart(i);
    }
    // One grant once all five are back: retries while only some are would
    // use up counter values and hide a seed repeated.
    let out: Vec<String> = (0..5)
        .map(|node| format!("redlock_node_state{{node=\"{node}\",state=\"quarantined\"}} 1"))
        .collect();
    daemon
        .scrape_until(&out.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    daemon.until_usable(5).await;
    let after = must_acquire(&mut client, "r", 0.25, 0.0).await;
    assert!(
        after.fencing_token > before.fencing_token,
        "token {} after the restarts, {} before",
        after.fencing_token,
        before.fencing_token
    );
    daemon.stop().await;
}
