//! Positions served by real Redis Clusters (docs/design.md#cluster-positions):
//! five clusters of three primaries (15 `redis-server --cluster-enabled
//! yes`), every kind of lock across slots, and the keys spread over every
//! primary.

use crate::support;

use std::collections::HashMap;

use redlockd_client::proto::admin_client::AdminClient;
use redlockd_client::proto::{
    AcquireManyRequest, AcquireRequest, ForceReleaseRequest, InspectRequest, ListLocksRequest, LockMode,
    ReleaseManyRequest,
};
use support::clusters::{RedisCluster, cli, start_clusters};
use support::*;

/// The daemon's settings for `clusters` (as `test_env`, which names
/// standalone masters), admin calls allowed on loopback.
pub fn cluster_env(clusters: &[RedisCluster]) -> HashMap<String, String> {
    let mut env = test_env(&Cluster::of(Vec::new()));
    let urls: Vec<String> = clusters.iter().map(RedisCluster::url).collect();
    env.insert("REDLOCKD__REDIS__NODES".into(), urls.join(","));
    env.insert("REDLOCKD__ADMIN__ALLOW_UNAUTHENTICATED".into(), "true".into());
    // Fifteen processes on two cores: rounds take longer.
    env.insert("REDLOCKD__REDIS__NODE_TIMEOUT".into(), "200ms".into());
    env.insert("REDLOCKD__LOCK__MIN_TTL".into(), "1s".into());
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_clusters_of_three_primaries_serve_every_kind_of_lock() {
    let clusters = start_clusters(5, 3, 0);
    let daemon = Daemon::start_with(cluster_env(&clusters)).await;
    daemon.until_usable(5).await;
    let mut c = daemon.client().await;

    // Plain locks on many resources (many slots), three rounds: each
    // resource's tokens only go up.
    let names: Vec<String> = (0..40).map(|i| format!("c/{i}")).collect();
    let mut last: HashMap<&str, u64> = HashMap::new();
    for _ in 0..3 {
        for name in &names {
            let lease = must_acquire(&mut c, name, 10.0, 2.0).await;
            if let Some(before) = last.insert(name, lease.fencing_token) {
                assert!(
                    lease.fencing_token > before,
                    "{name}: {before} then {}",
                    lease.fencing_token
                );
            }
            assert!(release(&mut c, &lease).await, "{name} was not held to its release");
        }
    }

    // Held locks land on every primary of every cluster.
    let held: Vec<_> = futures::future::join_all((0..40).map(|i| {
        let mut c = c.clone();
        async move { must_acquire(&mut c, &format!("c/{i}"), 10.0, 2.0).await }
    }))
    .await;
    for (k, cluster) in clusters.iter().enumerate() {
        for node in &cluster.nodes {
            let keys = cli(node.port(), &["--scan", "--pattern", "redlockd:{*}:lock:c/*"]);
            assert!(
                keys.lines().count() > 0,
                "cluster {k}: primary {} holds no lock",
                node.port()
            );
        }
    }
    let view = c
        .inspect(InspectRequest { resource: "c/7".into() })
        .await
        .unwrap()
        .into_inner();
    assert!(view.held && view.agreeing == 5, "{view:?}");
    // Listing walks every primary of every position.
    let listed = AdminClient::new(daemon.channel().await)
        .list_locks(ListLocksRequest {
            prefix: "c/".into(),
            page_size: 100,
            page_token: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    let mut seen = Vec::new();
    let mut page = listed;
    loop {
        seen.extend(page.locks.iter().map(|l| l.resource.clone()));
        if page.next_page_token.is_empty() {
            break;
        }
        page = AdminClient::new(daemon.channel().await)
            .list_locks(ListLocksRequest {
                prefix: "c/".into(),
                page_size: 100,
                page_token: page.next_page_token.clone(),
            })
            .await
            .unwrap()
            .into_inner();
    }
    seen.sort();
    let mut want = names.clone();
    want.sort();
    assert_eq!(seen, want, "each held lock listed once");
    // A force release deletes a held lock on every position's primary.
    let forced = AdminClient::new(daemon.channel().await)
        .force_release(ForceReleaseRequest {
            resource: "c/3".into(),
            reason: "the cluster test".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(forced.masters_held >= 3, "{forced:?}");
    let after = must_acquire(&mut c, "c/3", 10.0, 0.0).await;
    assert!(after.fencing_token > held[3].fencing_token);
    assert!(release(&mut c, &after).await);
    for lease in held.iter().filter(|l| l.resource != "c/3") {
        assert!(release(&mut c, lease).await);
    }

    // A waiter hears the release on its bucket's sharded channel, which the
    // primary serving the bucket carries while it waits.
    let blocker = must_acquire(&mut c, "c/w", 10.0, 0.0).await;
    let mut second = c.clone();
    let waiting = tokio::spawn(async move { must_acquire(&mut second, "c/w", 10.0, 8.0).await });
    let key = keys::of("c/w");
    let channel = redlockd::redis::scripts::released_channel(&key);
    let owner = clusters[0].owner_of(redlockd::redlock::buckets::slot(&key));
    let port = clusters[0].nodes[owner].port();
    let mut subscribed = false;
    for _ in 0..100 {
        subscribed = cli(port, &["pubsub", "shardchannels"]).lines().any(|l| l == channel);
        if subscribed {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        subscribed,
        "the waiter's bucket channel is not subscribed on its primary"
    );
    assert!(release(&mut c, &blocker).await);
    let granted = waiting.await.unwrap();
    assert!(granted.fencing_token > blocker.fencing_token);
    assert!(release(&mut c, &granted).await);

    // A set whose members are in different slots: all or nothing.
    let blocker = must_acquire(&mut c, "s/b", 10.0, 0.0).await;
    let set = |wait: f64| AcquireManyRequest {
        resources: ["s/a", "s/b", "s/c", "s/d"].map(String::from).to_vec(),
        ttl: secs(10.0),
        wait: if wait > 0.0 { secs(wait) } else { None },
        owner: "clusters".into(),
    };
    let refused = c.acquire_many(set(0.0)).await.unwrap().into_inner();
    assert!(!refused.acquired);
    for free in ["s/a", "s/c", "s/d"] {
        let lease = must_acquire(&mut c, free, 10.0, 0.0).await;
        assert!(release(&mut c, &lease).await, "{free} was left held by the refused set");
    }
    assert!(release(&mut c, &blocker).await);
    let granted = c.acquire_many(set(2.0)).await.unwrap().into_inner();
    assert!(granted.acquired && granted.leases.len() == 4, "{granted:?}");
    let released = c
        .release_many(ReleaseManyRequest {
            resources: granted.leases.iter().map(|l| l.resource.clone()).collect(),
            value: granted.leases[0].value.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(released.released, "{released:?}");

    // Readers share, a writer waits for them; two permits of two.
    let reader = |name: &str| AcquireRequest {
        mode: LockMode::Shared.into(),
        ..acquire_req(name, 10.0, 0.0)
    };
    let r1 = must_acquire_with(&mut c, reader("rw")).await;
    let r2 = must_acquire_with(&mut c, reader("rw")).await;
    assert!(
        !try_acquire(&mut c, "rw", 10.0, 0.0).await.acquired,
        "a writer beside readers"
    );
    assert!(release(&mut c, &r1).await && release(&mut c, &r2).await);
    let writer = must_acquire(&mut c, "rw", 10.0, 2.0).await;
    assert!(writer.fencing_token > r1.fencing_token);
    let permit = |n: u32| AcquireRequest {
        permits: n,
        ..acquire_req("pool", 10.0, 0.0)
    };
    let p1 = must_acquire_with(&mut c, permit(2)).await;
    let p2 = must_acquire_with(&mut c, permit(2)).await;
    assert_ne!(p1.slot, p2.slot);
    assert!(
        !c.acquire(permit(2)).await.unwrap().into_inner().acquired,
        "a third permit of two"
    );
    daemon.stop().await;
}
