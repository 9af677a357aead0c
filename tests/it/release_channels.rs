//! Release notifications per bucket (docs/design.md#waiting): a daemon
//! hears a bucket's releases only while it has waiters there.

use crate::support;

use std::time::Duration;

use support::clusters::cli;
use support::*;

/// The channels master `port` has subscribers on (`PUBSUB CHANNELS`, or
/// `PUBSUB SHARDCHANNELS` on a cluster).
fn channels(port: u16, sharded: bool) -> Vec<String> {
    let what = if sharded { "shardchannels" } else { "channels" };
    (cli(port, &["pubsub", what]).lines())
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Waits until `check` holds for the channels of `port` (5 s at most).
async fn until_channels(port: u16, sharded: bool, check: impl Fn(&[String]) -> bool) -> Vec<String> {
    for _ in 0..100 {
        let seen = channels(port, sharded);
        if check(&seen) {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    channels(port, sharded)
}

#[tokio::test]
async fn a_buckets_release_channel_is_subscribed_only_while_a_lock_of_it_has_waiters() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut c = daemon.client().await;
    let port = cluster.masters[0].port();
    let channel = redlockd::redis::scripts::released_channel(&keys::of("w"));
    // Locks taken and released with nobody waiting: no channel at all.
    let held = must_acquire(&mut c, "w", 10.0, 0.0).await;
    assert!(channels(port, false).is_empty(), "{:?}", channels(port, false));
    // A waiter: its bucket's channel, and only that one.
    let mut second = daemon.client().await;
    let waiting = tokio::spawn(async move { must_acquire(&mut second, "w", 10.0, 8.0).await });
    let seen = until_channels(port, false, |seen| !seen.is_empty()).await;
    assert_eq!(seen, [channel]);
    // The release reaches it: the waiter is granted at once, not after its
    // retry delay (whose default in tests is at most 60 ms: not told apart
    // here; the grant is what matters), and the channel goes.
    assert!(release(&mut c, &held).await);
    let granted = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .unwrap()
        .unwrap();
    assert!(granted.fencing_token > held.fencing_token);
    let after = until_channels(port, false, <[String]>::is_empty).await;
    assert!(after.is_empty(), "still subscribed without waiters: {after:?}");
    daemon.stop().await;
}
