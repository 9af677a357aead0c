//! The key layout against real masters (docs/design.md#keys): each
//! bucket's counter starts above the single counter of the layout before
//! buckets, and a bucket whose marker went missing behind a master's back
//! is noticed and repaired.

use crate::support;

use std::time::Duration;

use fred::prelude::{ClientLike, KeysInterface};
use support::*;

/// Far above any clock seed (2^52 µs is year 2112): only the counter of
/// the old layout can bring a bucket up to it.
const OLD: u64 = 1 << 52;

#[tokio::test]
async fn every_bucket_counter_starts_above_the_counter_of_the_layout_before_buckets() {
    let cluster = Cluster::start(5);
    for i in 0..5 {
        let admin = cluster.admin(i).await;
        // A counter the old layout left, on three of the five masters.
        if i < 3 {
            let _: () = admin
                .set("redlockd:fence", OLD + i as u64, None, None, false)
                .await
                .unwrap();
        }
        let _ = admin.quit().await;
    }
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let mut client = daemon.client().await;
    let lease = must_acquire(&mut client, "after-upgrade", 5.0, 0.0).await;
    assert!(
        lease.fencing_token / 16 > OLD,
        "token {} is not above the old counter {OLD}",
        lease.fencing_token
    );
    // Every bucket of the masters that had the old counter, not only the
    // one used: the first and the last bucket's counters.
    let first = redlockd::redlock::buckets::tag(0);
    let last = redlockd::redlock::buckets::tag(16383);
    for i in 0..3 {
        let admin = cluster.admin(i).await;
        for tag in [first, last] {
            let counter: Option<u64> = admin.get(format!("redlockd:{{{tag}}}:fence")).await.unwrap();
            assert!(
                counter.is_some_and(|c| c >= OLD + i as u64),
                "master {i} bucket {tag}: {counter:?}"
            );
        }
        let _ = admin.quit().await;
    }
    daemon.stop().await;
}

#[tokio::test]
async fn a_bucket_whose_keys_were_deleted_is_noticed_and_repaired() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let mut client = daemon.client().await;
    let first = must_acquire(&mut client, "z", 5.0, 2.0).await;
    assert!(release(&mut client, &first).await);
    // Someone deletes one bucket's marker and counter on master 0
    // (bucket 0's, which the probe reads, stay). (A marker deleted alone
    // goes unnoticed where the script cache proves the process: the
    // counter stands for it, docs/design.md#process-identity.)
    let marker = keys::marker("lock:z");
    let admin = cluster.admin(0).await;
    let was: Option<String> = admin.get(&marker).await.unwrap();
    assert!(was.is_some());
    let _: i64 = admin.del(vec![marker.clone(), keys::fence("lock:z")]).await.unwrap();
    // The next grant in that bucket is refused there (four masters still
    // grant), which makes the next probe read every bucket's marker and
    // repair the master.
    let during = must_acquire(&mut client, "z", 5.0, 2.0).await;
    assert!(during.fencing_token > first.fencing_token);
    assert!(release(&mut client, &during).await);
    let mut restored = None;
    // Up to 30 s: the repair reads 16,384 buckets of four masters, slow on
    // a loaded machine. There a refusal can also come too late: master 0's
    // reply timed out, the lock granted by the other four, and nothing told
    // the daemon. So a grant in the bucket every second until it is noticed
    // (each would be refused on master 0 until the repair).
    for attempt in 1..=600 {
        restored = admin.get(&marker).await.unwrap();
        if restored.is_some() {
            break;
        }
        if attempt % 20 == 0 {
            let again = must_acquire(&mut client, "z", 5.0, 2.0).await;
            assert!(release(&mut client, &again).await);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(restored, was, "the bucket's marker was never written back");
    daemon.until_usable(5).await;
    let after = must_acquire(&mut client, "z", 5.0, 2.0).await;
    assert!(after.fencing_token > during.fencing_token);
    let _ = admin.quit().await;
    daemon.stop().await;
}
