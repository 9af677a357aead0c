//! Shared locks (read-write locks) against a real daemon and five real
//! masters (docs/design.md#shared-locks): readers together, a writer
//! excluded by any reader and granted after the last leaves, a waiting
//! writer not starved by a stream of readers, readers that expire and
//! extend one by one, tokens (a reader's is the last writer's, a later
//! writer's is larger), sessions and the Pipeline, and bad modes refused.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{AcquireRequest, ExtendRequest, InspectRequest, Lease, LockMode};
use redlockd_client::{Client, HoldOptions, Options, Pipeline};
use support::*;
use tonic::transport::Channel;

fn shared_req(resource: &str, ttl: f64, wait: f64) -> AcquireRequest {
    AcquireRequest {
        mode: LockMode::Shared.into(),
        ..acquire_req(resource, ttl, wait)
    }
}

async fn read(client: &mut LockClient<Channel>, resource: &str, ttl: f64, wait: f64) -> Option<Lease> {
    let reply = client
        .acquire(shared_req(resource, ttl, wait))
        .await
        .unwrap()
        .into_inner();
    reply.lease.filter(|_| reply.acquired)
}

async fn readers(client: &mut LockClient<Channel>, resource: &str) -> (bool, u32) {
    let view = client
        .inspect(InspectRequest {
            resource: resource.into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(view.holder.is_none() || view.readers == 0, "{view:?}");
    (view.held, view.readers)
}

#[tokio::test]
async fn readers_hold_together_and_a_writer_waits_for_the_last_of_them() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut c = daemon.client().await;

    let first = read(&mut c, "books", 10.0, 0.0).await.expect("a free lock");
    let second = read(&mut c, "books", 10.0, 0.0).await.expect("readers share");
    assert_eq!(first.mode(), LockMode::Shared);
    assert!(
        first.value.starts_with('r') && first.value.len() == 41,
        "a shared value"
    );
    assert_ne!(first.value, second.value);
    // Tokens of readers never go down (each publishes its own to a majority).
    assert!(second.fencing_token >= first.fencing_token);
    assert_eq!(readers(&mut c, "books").await, (true, 2));

    // A writer is refused while any reader holds.
    assert!(!try_acquire(&mut c, "books", 10.0, 0.0).await.acquired);
    assert!(release(&mut c, &first).await, "the first reader held to the end");
    assert_eq!(readers(&mut c, "books").await, (true, 1));
    assert!(!try_acquire(&mut c, "books", 10.0, 0.0).await.acquired);
    assert!(release(&mut c, &second).await);
    assert_eq!(readers(&mut c, "books").await, (false, 0));

    // Then the writer, with a larger token; readers are refused meanwhile.
    let writer = must_acquire(&mut c, "books", 10.0, 0.0).await;
    assert_eq!(writer.mode(), LockMode::Exclusive);
    assert!(writer.fencing_token > second.fencing_token);
    assert!(
        read(&mut c, "books", 10.0, 0.0).await.is_none(),
        "a reader beside a writer"
    );
    // A reader waiting for the writer gets in when it releases, with its
    // token: every read is at least the last write.
    let waiting = {
        let mut c = c.clone();
        tokio::spawn(async move { read(&mut c, "books", 10.0, 5.0).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(release(&mut c, &writer).await);
    let after = waiting.await.unwrap().expect("the reader got in after the writer");
    assert!(after.fencing_token >= writer.fencing_token);
    let next_writer = try_acquire(&mut c, "books", 10.0, 0.0).await;
    assert!(!next_writer.acquired, "a writer beside a reader");
    assert!(release(&mut c, &after).await);
    let next_writer = must_acquire(&mut c, "books", 10.0, 0.0).await;
    assert!(next_writer.fencing_token > after.fencing_token);
    daemon.stop().await;
}

#[tokio::test]
async fn readers_expire_and_extend_one_by_one() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut c = daemon.client().await;
    let short = read(&mut c, "maps", 0.5, 0.0).await.unwrap();
    let long = read(&mut c, "maps", 5.0, 0.0).await.unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        readers(&mut c, "maps").await,
        (true, 1),
        "the short reader expired alone"
    );
    let extend = |lease: &Lease| ExtendRequest {
        resource: lease.resource.clone(),
        value: lease.value.clone(),
        ttl: secs(1.0),
    };
    let expired = c.extend(extend(&short)).await.unwrap().into_inner();
    assert!(!expired.extended, "an expired reader was extended");
    assert!(!release(&mut c, &short).await, "an expired reader released as held");
    // Shortened to 1 s: the writer gets in once the long reader's new
    // deadline passes, not its first one (5 s).
    let extended = c.extend(extend(&long)).await.unwrap().into_inner();
    assert!(extended.extended);
    assert!(!try_acquire(&mut c, "maps", 10.0, 0.0).await.acquired);
    let writer = must_acquire(&mut c, "maps", 10.0, 3.0).await;
    assert!(writer.fencing_token > long.fencing_token);
    daemon.stop().await;
}

/// Readers come and go without a gap (each overlaps the next), for longer
/// than the writer waits: without the writer's mark the writer would never
/// find the lock free.
#[tokio::test]
async fn a_waiting_writer_is_not_starved_by_a_stream_of_readers() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let c = daemon.client().await;
    let stop = Arc::new(AtomicBool::new(false));
    let (reads, refused) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut streams = Vec::new();
    for i in 0..3u64 {
        let (mut c, stop, reads, refused) = (c.clone(), stop.clone(), reads.clone(), refused.clone());
        streams.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100 * i)).await;
            while !stop.load(Ordering::SeqCst) {
                match read(&mut c, "stream", 5.0, 0.0).await {
                    Some(lease) => {
                        reads.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(300)).await;
                        release(&mut c, &lease).await;
                    }
                    None => {
                        refused.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    let mut w = c.clone();
    let reply = try_acquire(&mut w, "stream", 5.0, 4.0).await;
    let readers_before = reads.load(Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    for stream in streams {
        stream.await.unwrap();
    }
    assert!(readers_before >= 3, "the readers were running: {readers_before}");
    assert!(
        reply.acquired,
        "the writer starved behind {readers_before} readers: {reply:?}"
    );
    assert!(
        refused.load(Ordering::SeqCst) > 0,
        "no reader was kept out for the writer"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn shared_sessions_hold_together_and_an_exclusive_session_follows() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let client = Client::connect(&daemon.addr.to_string(), Options::default())
        .await
        .unwrap();
    let reader = || HoldOptions::new().ttl(Duration::from_secs(2)).shared();
    let a = client.hold("cfg", reader()).await.unwrap();
    let b = client.hold("cfg", reader()).await.unwrap();
    assert!(b.fencing_token() >= a.fencing_token());
    let writer = {
        let client = client.clone();
        tokio::spawn(async move {
            let options = HoldOptions::new()
                .ttl(Duration::from_secs(2))
                .wait(Duration::from_secs(10));
            client.hold("cfg", options).await
        })
    };
    // Past a TTL: the readers' sessions extend them, the writer waits.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!writer.is_finished(), "the writer got in beside two readers");
    let mut c = daemon.client().await;
    assert_eq!(readers(&mut c, "cfg").await, (true, 2));
    let token = b.fencing_token();
    assert!(a.release().await.unwrap() && b.release().await.unwrap());
    let writer = writer.await.unwrap().expect("the writer after the readers");
    assert!(writer.fencing_token() > token);
    writer.release().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn the_pipeline_takes_shared_locks_and_bad_modes_are_refused_naming_the_field() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let pipeline = Pipeline::open(daemon.client().await).await.unwrap();
    let one = pipeline.acquire(shared_req("p", 10.0, 0.0)).await.unwrap();
    let two = pipeline.acquire(shared_req("p", 10.0, 0.0)).await.unwrap();
    assert!(one.acquired && two.acquired, "{one:?} {two:?}");
    let scrape = daemon.scrape().await;
    let shared = r#"redlockd_acquire_by_kind_total{kind="shared",status="success"} 2"#;
    assert!(scrape.contains(shared), "{scrape}");
    let mut c = daemon.client().await;
    for bad in [2, -1] {
        let request = AcquireRequest {
            mode: bad,
            ..acquire_req("p", 10.0, 0.0)
        };
        let status = c.acquire(request).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
        assert!(
            status.message().contains("mode") && status.message().contains("LOCK_MODE_SHARED (1)"),
            "{status:?}"
        );
    }
    daemon.stop().await;
}
