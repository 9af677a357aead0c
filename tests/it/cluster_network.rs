//! The fault suite's network faults on cluster positions
//! (docs/design.md#cluster-positions): five clusters of three primaries,
//! each primary behind a fault proxy announced in its place, two daemons,
//! contending clients on "r", and the history checker. Delays, partitions
//! of some positions' primaries or of a majority of positions, lost replies
//! and connection resets must all be safe, with grants after the heal.

use crate::support;

use std::time::Duration;

use support::clusters::{RedisCluster, start_clusters, url_via};
use support::proxy::{Mode, Proxy};
use support::rig::Rig;
use support::{Cluster, Daemon};

use crate::cluster_faults::scenario;
use crate::cluster_positions::cluster_env;

const PRIMARIES: usize = 3;

/// Five proxied clusters and two daemons (quarantine on, `lock.max_ttl`
/// 4 s); the rig's one line of proxies is every cluster's nodes in turn,
/// so proxy `k * 3 + j` is node `j` of cluster `k`.
async fn proxied_rig() -> (Vec<RedisCluster>, Rig) {
    let clusters = start_clusters(5, PRIMARIES, 0);
    let mut line: Vec<Proxy> = Vec::new();
    let mut urls = Vec::new();
    for cluster in &clusters {
        let proxies = cluster.behind_proxies().await;
        urls.push(url_via(cluster, &proxies));
        line.extend(proxies);
    }
    let mut env = cluster_env(&clusters);
    for (k, v) in [
        ("REDLOCKD__REDIS__NODES", urls.join(",").as_str()),
        ("REDLOCKD__SAFETY__QUARANTINE", "true"),
        ("REDLOCKD__SAFETY__CHECK_INTERVAL", "100ms"),
        ("REDLOCKD__LOCK__MAX_TTL", "4s"),
        ("REDLOCKD__LOCK__DEFAULT_TTL", "1s"),
        ("REDLOCKD__REDIS__RECONNECT_MAX_DELAY", "200ms"),
    ] {
        env.insert(k.into(), v.into());
    }
    let daemons = vec![Daemon::start_with(env.clone()).await, Daemon::start_with(env).await];
    let rig = Rig::over(Cluster::of(Vec::new()), vec![line], daemons).await;
    // Every primary is reached through its proxy (the daemons' lock and
    // probe connections): a fault on a proxy is a fault on the path.
    let line = &rig.proxies[0];
    let direct: Vec<usize> = (0..line.len()).filter(|n| line[*n].connections() == 0).collect();
    assert!(
        direct.is_empty(),
        "primaries not reached through their proxies: {direct:?}"
    );
    (clusters, rig)
}

/// The proxy in front of the primary serving "r" in cluster `k`.
fn serving_r(clusters: &[RedisCluster], k: usize) -> usize {
    let slot = redlockd::redlock::buckets::slot(&support::keys::of("r"));
    k * PRIMARIES + clusters[k].owner_of(slot)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delay_on_every_primary_below_the_per_node_timeout_is_safe() {
    let (mut clusters, rig) = proxied_rig().await;
    let delay = Mode::Delay {
        base: Duration::from_millis(20),
        jitter: Duration::from_millis(40),
    };
    let fault = |_: &mut [RedisCluster]| (0..5 * PRIMARIES).for_each(|n| rig.link(n, delay));
    scenario(&mut clusters, &rig, fault, |_| rig.heal_links()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_primaries_serving_r_blackholed_in_two_clusters_is_safe() {
    let (mut clusters, rig) = proxied_rig().await;
    let cut = [serving_r(&clusters, 1), serving_r(&clusters, 3)];
    let fault = |_: &mut [RedisCluster]| cut.iter().for_each(|n| rig.link(*n, Mode::Blackhole));
    scenario(&mut clusters, &rig, fault, |_| rig.heal_links()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_whole_clusters_blackholed_is_safe_and_recovers() {
    let (mut clusters, rig) = proxied_rig().await;
    let fault = |_: &mut [RedisCluster]| (0..3 * PRIMARIES).for_each(|n| rig.link(n, Mode::Blackhole));
    scenario(&mut clusters, &rig, fault, |_| rig.heal_links()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_replies_from_the_primaries_serving_r_are_safe() {
    let (mut clusters, rig) = proxied_rig().await;
    let cut = [serving_r(&clusters, 0), serving_r(&clusters, 4)];
    let fault = |_: &mut [RedisCluster]| cut.iter().for_each(|n| rig.link(*n, Mode::DropReplies));
    scenario(&mut clusters, &rig, fault, |_| rig.heal_links()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_resets_of_primaries_are_safe() {
    let (mut clusters, rig) = proxied_rig().await;
    // The primary serving "r" in one cluster, and every primary of another.
    let reset: Vec<usize> = std::iter::once(serving_r(&clusters, 2)).chain(0..PRIMARIES).collect();
    let fault = |_: &mut [RedisCluster]| reset.iter().for_each(|n| rig.link(*n, Mode::Reset));
    scenario(&mut clusters, &rig, fault, |_| rig.heal_links()).await;
}
