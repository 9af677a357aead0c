//! `Lock/Watch` over gRPC against real masters and two daemons
//! (docs/design.md#observe-and-watch): the current state first, then each
//! change — made through this daemon or the other — named.

use std::time::Duration;

use redlockd_client::proto::{WatchEvent, WatchRequest, WatchResponse};
use tonic::Streaming;

use crate::support::{Cluster, Daemon, acquire_req, must_acquire_with, release};

async fn next(watch: &mut Streaming<WatchResponse>, within: Duration) -> WatchResponse {
    tokio::time::timeout(within, watch.message())
        .await
        .expect("told in time")
        .expect("no error")
        .expect("the stream goes on")
}

#[tokio::test]
async fn a_watch_sees_the_holder_then_each_change_through_either_daemon() {
    let cluster = Cluster::start(5);
    let (one, two) = (Daemon::start(&cluster).await, Daemon::start(&cluster).await);
    one.until_usable(5).await;
    two.until_usable(5).await;
    let (mut here, mut there) = (one.client().await, two.client().await);
    let mut watch = (here.watch(WatchRequest { resource: "w".into() }).await)
        .expect("watch")
        .into_inner();
    let first = next(&mut watch, Duration::from_secs(5)).await;
    assert_eq!((first.event(), first.held), (WatchEvent::Current, false));

    let mut request = acquire_req("w", 30.0, 0.0);
    request.owner = "worker-1".into();
    let lease = must_acquire_with(&mut here, request).await;
    let seen = next(&mut watch, Duration::from_secs(2)).await;
    assert_eq!(seen.event(), WatchEvent::Acquired, "{seen:?}");
    let holder = seen.holder.expect("a holder");
    assert_eq!(holder.owner, "worker-1");
    assert!(holder.fencing_token >= lease.fencing_token);
    assert!(release(&mut here, &lease).await);
    let seen = next(&mut watch, Duration::from_secs(2)).await;
    assert_eq!((seen.event(), seen.held), (WatchEvent::Released, false), "{seen:?}");

    // Through the other daemon, left to expire: acquired, then expired.
    let mut request = acquire_req("w", 1.5, 0.0);
    request.owner = "worker-2".into();
    must_acquire_with(&mut there, request).await;
    let seen = next(&mut watch, Duration::from_secs(3)).await;
    assert_eq!(seen.event(), WatchEvent::Acquired, "{seen:?}");
    assert_eq!(seen.holder.map(|h| h.owner), Some("worker-2".into()));
    let seen = next(&mut watch, Duration::from_secs(4)).await;
    assert_eq!(seen.event(), WatchEvent::Expired, "{seen:?}");
}
