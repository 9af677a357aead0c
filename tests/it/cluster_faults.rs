//! Failovers inside the clusters behind the positions
//! (docs/design.md#cluster-positions): a promoted replica that lost
//! acknowledged writes is the hazard of a restart without persistence, and
//! quarantine must keep it out. Safe runs pass the history checker; the
//! same failover without quarantine, in three of five clusters, is caught.

use crate::support;

use std::time::Duration;

use support::clusters::{RedisCluster, start_clusters};
use support::history::ViolationKind;
use support::rig::Rig;
use support::{Cluster, Daemon};
use tokio::time::{Instant, sleep};

use crate::cluster_positions::cluster_env;

/// The slot of the lock on "r" (its bucket), whose primary fails over.
fn slot_of_r() -> u16 {
    redlockd::redlock::buckets::slot(&support::keys::of("r"))
}

/// Five clusters of three primaries, the first `with_replicas` with a
/// replica per primary, and `daemons` daemons with quarantine `on` (for
/// `lock.max_ttl`, 4 s).
pub(crate) async fn cluster_rig(with_replicas: usize, daemons: usize, quarantine: bool) -> (Vec<RedisCluster>, Rig) {
    cluster_rig_for(with_replicas, daemons, quarantine, "4s").await
}

async fn cluster_rig_for(
    with_replicas: usize,
    daemons: usize,
    quarantine: bool,
    max_ttl: &str,
) -> (Vec<RedisCluster>, Rig) {
    let mut clusters = start_clusters(with_replicas, 3, 1);
    clusters.extend(start_clusters(5 - with_replicas, 3, 0));
    let mut env = cluster_env(&clusters);
    for (k, v) in [
        (
            "REDLOCKD__SAFETY__QUARANTINE",
            if quarantine { "true" } else { "false" },
        ),
        ("REDLOCKD__SAFETY__CHECK_INTERVAL", "100ms"),
        ("REDLOCKD__LOCK__MAX_TTL", max_ttl),
        ("REDLOCKD__LOCK__DEFAULT_TTL", "1s"),
        ("REDLOCKD__REDIS__RECONNECT_MAX_DELAY", "200ms"),
    ] {
        env.insert(k.into(), v.into());
    }
    let mut started = Vec::new();
    for _ in 0..daemons {
        started.push(Daemon::start_with(env.clone()).await);
    }
    let rig = Rig::over(Cluster::of(Vec::new()), Vec::new(), started).await;
    (clusters, rig)
}

/// In each of the first `n` clusters: the replica of the primary serving
/// "r" saves what it has now. Returns (primary, replica) per cluster.
async fn snapshots(clusters: &[RedisCluster], n: usize) -> Vec<(usize, usize)> {
    // Let the replicas copy the markers and counters repair wrote.
    sleep(Duration::from_millis(500)).await;
    (clusters[..n].iter())
        .map(|c| {
            let primary = c.owner_of(slot_of_r());
            let replica = c.replica_of(primary);
            c.snapshot(replica);
            (primary, replica)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failover_that_loses_writes_inside_one_cluster_is_safe_under_load() {
    let (mut clusters, rig) = cluster_rig(1, 2, true).await;
    let lost = snapshots(&clusters, 1).await;
    let work = rig.workload(4, "r", Duration::from_millis(9000)).await;
    // Acknowledged writes after the snapshot, then the failover loses them.
    sleep(Duration::from_secs(2)).await;
    let (primary, replica) = lost[0];
    clusters[0].fail_over_losing_writes(primary, replica);
    let healed = Instant::now();
    work.await.unwrap();
    let report = rig.check("r", Some(healed));
    report.assert_safe();
    assert!(
        report.stats.grants >= 10,
        "too few grants to mean anything: {}",
        report.stats
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reshard_under_load_is_safe() {
    let (clusters, rig) = cluster_rig(0, 2, true).await;
    // A resource in one of the first 100 slots: moving the first 100 slots
    // of their primary moves it (quickly, keys and all).
    let resource = (0..)
        .map(|i| format!("m{i}"))
        .find(|r| redlockd::redlock::buckets::slot(&support::keys::of(r)) < 100)
        .unwrap();
    let slot = redlockd::redlock::buckets::slot(&support::keys::of(&resource));
    let work = rig.workload(4, &resource, Duration::from_millis(9000)).await;
    sleep(Duration::from_secs(1)).await;
    let from = clusters[0].owner_of(slot);
    let to = (from + 1) % 3;
    let cluster = &clusters[0];
    tokio::task::block_in_place(|| cluster.reshard(from, to, 100));
    assert_eq!(clusters[0].owner_of(slot), to, "the slot did not move");
    let healed = Instant::now();
    work.await.unwrap();
    let report = rig.check(&resource, Some(healed));
    report.assert_safe();
    assert!(
        report.stats.grants >= 10,
        "too few grants to mean anything: {}",
        report.stats
    );
}

/// A holder takes "r" for 6 s (three failovers take seconds on a loaded
/// machine); the failover loses its lock in three of the five clusters; a
/// second client then asks for "r". Returns the report and whether the
/// second client got it while the holder's lease ran.
async fn three_clusters_lose_the_holders_lock(quarantine: bool) -> (support::history::Report, bool) {
    let (mut clusters, rig) = cluster_rig_for(3, 1, quarantine, "8s").await;
    let lost = snapshots(&clusters, 3).await;
    let mut holder = rig.client(0, "holder").await;
    let held = holder
        .acquire_ttl("r", Duration::from_secs(6), Duration::from_secs(2))
        .await
        .expect("the holder gets r");
    // The three at once: one after the other they can outlast the lease
    // on a loaded machine.
    tokio::task::block_in_place(|| {
        std::thread::scope(|scope| {
            for (cluster, (primary, replica)) in clusters.iter_mut().zip(lost) {
                scope.spawn(move || cluster.fail_over_losing_writes(primary, replica));
            }
        });
    });
    let mut second = rig.client(0, "second").await;
    let granted = second
        .acquire_ttl("r", Duration::from_secs(3), Duration::from_secs(8))
        .await;
    let during = granted.is_some() && Instant::now() < held.sent + held.validity;
    if let Some(g) = &granted {
        second.write_fenced(g, "second");
    }
    holder.write_fenced(&held, "holder");
    (rig.check("r", None), during)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_failovers_that_lose_writes_in_three_clusters_without_quarantine_are_caught() {
    let (report, during) = three_clusters_lose_the_holders_lock(false).await;
    assert!(
        during,
        "the control did not produce a second grant during the holder's lease"
    );
    assert!(
        report.has(ViolationKind::Overlap),
        "the checker missed the double grant:\n{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twin_the_same_failovers_with_quarantine_keep_the_second_client_out() {
    let (report, during) = three_clusters_lose_the_holders_lock(true).await;
    assert!(!during, "a second grant during the holder's lease");
    report.assert_safe();
}

/// The fault suite's pattern on cluster positions: four clients on "r",
/// `fault` at 1 s, `heal` 2.5 s later, 4 s more; the checker must be green
/// with grants after the heal.
pub(crate) async fn scenario(
    clusters: &mut [RedisCluster],
    rig: &Rig,
    fault: impl FnOnce(&mut [RedisCluster]),
    heal: impl FnOnce(&mut [RedisCluster]),
) {
    let work = rig.workload(4, "r", Duration::from_millis(7500)).await;
    sleep(Duration::from_secs(1)).await;
    tokio::task::block_in_place(|| fault(clusters));
    sleep(Duration::from_millis(2500)).await;
    tokio::task::block_in_place(|| heal(clusters));
    let healed = Instant::now();
    work.await.unwrap();
    let report = rig.check("r", Some(healed));
    report.assert_safe();
    assert!(
        report.stats.grants >= 5,
        "too few grants to mean anything: {}",
        report.stats
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_the_primaries_serving_r_in_two_clusters_and_their_empty_restarts_are_safe() {
    let (mut clusters, rig) = cluster_rig(0, 2, true).await;
    let owners: Vec<usize> = clusters.iter().map(|c| c.owner_of(slot_of_r())).collect();
    let fault = |clusters: &mut [RedisCluster]| {
        for k in [0, 3] {
            clusters[k].nodes[owners[k]].kill();
        }
    };
    // No persistence: each comes back empty, with its place in the cluster
    // (nodes.conf), and is quarantined until repaired.
    let heal = |clusters: &mut [RedisCluster]| {
        for k in [0, 3] {
            clusters[k].nodes[owners[k]].restart().unwrap();
        }
    };
    scenario(&mut clusters, &rig, fault, heal).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigstop_of_the_primaries_serving_r_in_two_clusters_beyond_the_ttl_is_safe() {
    let (mut clusters, rig) = cluster_rig(0, 2, true).await;
    let owners: Vec<usize> = clusters.iter().map(|c| c.owner_of(slot_of_r())).collect();
    let (o1, o4) = (owners[1], owners[4]);
    let fault = |clusters: &mut [RedisCluster]| {
        clusters[1].nodes[o1].pause();
        clusters[4].nodes[o4].pause();
    };
    let heal = |clusters: &mut [RedisCluster]| {
        clusters[1].nodes[o1].resume();
        clusters[4].nodes[o4].resume();
    };
    scenario(&mut clusters, &rig, fault, heal).await;
}
