//! Quarantine per shard (docs/design.md#cluster-positions): a failover
//! inside one cluster holds out the buckets of that one primary for
//! `lock.max_ttl` and repairs them; the position's other shards keep their
//! vote all the while (Inspect shows which positions took part).

use crate::support;

use std::time::Duration;

use redlockd::redlock::buckets::slot;
use redlockd_client::proto::InspectRequest;
use redlockd_client::proto::lock_client::LockClient;
use support::clusters::start_clusters;
use support::*;
use tonic::transport::Channel;

use crate::cluster_positions::cluster_env;

/// The value of `redlockd_node_buckets_quarantined` for position `node`.
fn buckets_out(scraped: &str, node: usize) -> Option<u64> {
    let series = format!("redlockd_node_buckets_quarantined{{node=\"{node}\"}} ");
    let line = scraped.lines().find(|l| l.starts_with(&series))?;
    line[series.len()..].trim().parse().ok()
}

/// Scrapes until position `node` has a number of buckets out that `wanted`
/// accepts (at most 20 s); returns the scrape.
async fn until_out(daemon: &Daemon, node: usize, wanted: impl Fn(u64) -> bool) -> String {
    for _ in 0..200 {
        let scraped = daemon.scrape().await;
        if buckets_out(&scraped, node).is_some_and(&wanted) {
            return scraped;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "position {node}'s buckets out never became as wanted: {:?}",
        buckets_out(&daemon.scrape().await, node)
    );
}

/// What Inspect says of position `node` for `resource`: its state for the
/// resource's bucket, and whether it holds the lock.
async fn seen_by(c: &mut LockClient<Channel>, resource: &str, node: usize) -> (String, bool) {
    let request = InspectRequest {
        resource: resource.into(),
    };
    let reply = c.inspect(request).await.expect("inspect").into_inner();
    let view = reply
        .nodes
        .into_iter()
        .find(|n| n.index as usize == node)
        .expect("every position is shown");
    (view.state, view.held)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failover_in_one_shard_holds_out_its_buckets_while_the_rest_of_the_position_votes() {
    // Three clusters, the first with a replica per primary.
    let clusters = {
        let mut first = start_clusters(1, 3, 1);
        first.extend(start_clusters(2, 3, 0));
        first
    };
    let mut env = cluster_env(&clusters);
    for (k, v) in [
        ("REDLOCKD__SAFETY__QUARANTINE", "true"),
        ("REDLOCKD__SAFETY__CHECK_INTERVAL", "100ms"),
        ("REDLOCKD__LOCK__MAX_TTL", "6s"),
        ("REDLOCKD__LOCK__DEFAULT_TTL", "1s"),
        ("REDLOCKD__REDIS__RECONNECT_MAX_DELAY", "200ms"),
    ] {
        env.insert(k.into(), v.into());
    }
    let daemon = Daemon::start_with(env).await;
    daemon.until_usable(3).await;
    until_out(&daemon, 0, |out| out == 0).await;
    let mut c = daemon.client().await;

    let slot_of = |r: &str| slot(&keys::of(r));
    let inside = "shard/in";
    let primary = clusters[0].owner_of(slot_of(inside));
    let outside = (0..)
        .map(|i| format!("shard/out{i}"))
        .find(|r| clusters[0].owner_of(slot_of(r)) != primary)
        .unwrap();
    let before = must_acquire(&mut c, inside, 5.0, 2.0).await;
    assert!(seen_by(&mut c, inside, 0).await.1, "the first position took part");
    assert!(release(&mut c, &before).await);

    let replica = clusters[0].replica_of(primary);
    tokio::task::block_in_place(|| clusters[0].fail_over(replica));
    // A third of the first position's buckets: the promoted replica's.
    let scraped = until_out(&daemon, 0, |out| out > 0).await;
    let out = buckets_out(&scraped, 0).unwrap();
    assert!(
        (5000..=6000).contains(&out),
        "{out} buckets out, not one primary's third"
    );
    assert!(
        scraped.contains("redlock_node_state{node=\"0\",state=\"usable\"} 1\n"),
        "{scraped}"
    );

    // Another shard of the same position still votes.
    let lease = must_acquire(&mut c, &outside, 5.0, 2.0).await;
    assert_eq!(seen_by(&mut c, &outside, 0).await, ("usable".to_owned(), true));
    assert!(release(&mut c, &lease).await);
    // The failed-over shard does not: granted by the other two alone.
    let lease = must_acquire(&mut c, inside, 5.0, 2.0).await;
    assert_eq!(seen_by(&mut c, inside, 0).await, ("quarantined".to_owned(), false));
    assert!(lease.fencing_token > before.fencing_token);
    assert!(release(&mut c, &lease).await);

    // After max_ttl its counters are repaired and it votes again, its
    // tokens above every one before.
    until_out(&daemon, 0, |out| out == 0).await;
    let after = must_acquire(&mut c, inside, 5.0, 2.0).await;
    assert_eq!(seen_by(&mut c, inside, 0).await, ("usable".to_owned(), true));
    assert!(
        after.fencing_token > lease.fencing_token,
        "{} then {}",
        lease.fencing_token,
        after.fencing_token
    );
}
