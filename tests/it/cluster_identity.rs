//! The script cache as proof of process on a cluster position
//! (docs/design.md#process-identity): every primary proved, a promoted
//! replica not, and a primary demoted and promoted back (a failback) not
//! either, because the variants in use were made after it was demoted.

use std::time::Duration;

use redlockd::redis::node::RedisNode;
use redlockd::redlock::node::Probed;
use redlockd::redlock::{LockValue, Node, NodeError, buckets};

use crate::support::clusters::{RedisCluster, cli};
use crate::support::keys;
use crate::support::redis_node::{TTL, node};

/// How many `INFO` calls the nodes at `ports` served, not counting this
/// look (which adds one on each).
fn infos(ports: &[u16]) -> u64 {
    let of = |port: u16| {
        let stats = cli(port, &["info", "commandstats"]);
        (stats.lines())
            .find_map(|l| l.strip_prefix("cmdstat_info:calls="))
            .map_or(0, |rest| rest.split(',').next().unwrap().parse::<u64>().unwrap())
    };
    ports.iter().map(|p| of(*p)).sum()
}

async fn grant(node: &RedisNode, name: &str) -> Result<Option<u64>, NodeError> {
    let value = LockValue::random();
    node.try_lock(&keys::of(name), value.expose(), TTL, "").await
}

/// Names of locks whose slots primary `primary` serves now.
fn names_on(cluster: &RedisCluster, primary: usize, n: usize) -> Vec<String> {
    (0..)
        .map(|i| format!("n{i}"))
        .filter(|name| cluster.owner_of(buckets::slot(&keys::of(name))) == primary)
        .take(n)
        .collect()
}

/// Three primaries with a replica each. Proved, grants read no `INFO`;
/// after a failover the promoted replica answers `NOSCRIPT` and is refused
/// as unverified until verified; and once it was, the old primary promoted
/// back refuses as well: it kept the variants it was given, which are no
/// longer the ones in use (were they reused, it would grant on a copy of
/// its replacement's data).
#[tokio::test]
async fn on_a_cluster_the_cache_proves_each_primary_and_a_failback_is_not_proved() {
    let cluster = RedisCluster::start(3, 1);
    let replica = cluster.replica_of(0);
    let ports: Vec<u16> = cluster.nodes.iter().map(|n| n.port()).collect();
    let node = node(cluster.url()).await;
    Probed::probe(&node).await.unwrap();
    let before = infos(&ports);
    for i in 0..9 {
        assert!(grant(&node, &format!("a{i}")).await.unwrap().is_some());
    }
    assert_eq!(infos(&ports), before + 6, "grants on proved primaries read INFO");

    let moved = names_on(&cluster, 0, 3);
    cluster.fail_over(replica);
    let refused = grant(&node, &moved[0]).await;
    assert!(
        refused.is_err(),
        "a promoted replica granted before any probe: {refused:?}"
    );
    // The monitor's probe, repair and probe again: proved anew.
    let seen = Probed::probe(&node).await.unwrap();
    Probed::repair(&node, &keys::every_bucket(), &seen.identity())
        .await
        .unwrap();
    Probed::probe(&node).await.unwrap();
    let before = infos(&ports);
    assert!(grant(&node, &moved[1]).await.unwrap().is_some());
    assert_eq!(infos(&ports), before + 6, "the promoted replica was not proved");

    cluster.fail_over(0);
    // The lock connection may take a moment to follow the slot map.
    let mut outcome = grant(&node, &moved[2]).await;
    for _ in 0..20 {
        if outcome.as_ref().is_err_and(NodeError::is_unverified) || outcome.as_ref().is_ok_and(Option::is_some) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        outcome = grant(&node, &moved[2]).await;
    }
    assert!(
        outcome.as_ref().is_err_and(NodeError::is_unverified),
        "the old primary, promoted back, was not refused: {outcome:?}"
    );
}
