//! The `Pipeline` stream end to end: real daemons against five real
//! `redis-server` masters. Its calls must do exactly what the unary calls
//! do, answer as they finish, keep to the limit of calls in flight, and lose
//! nothing when the client half-closes, leaves, or the daemon shuts down.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redlockd_client::Pipeline;
use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::pipeline_request::Call;
use redlockd_client::proto::pipeline_response::Result as Answer;
use redlockd_client::proto::{ExtendRequest, PipelineRequest, PipelineResponse, ReleaseRequest};
use support::*;
use tokio::sync::mpsc;
use tonic::transport::Channel;
use tonic::{Code, Streaming};

/// A raw stream: the sender of its calls and its replies.
async fn raw(client: &mut LockClient<Channel>) -> (mpsc::Sender<PipelineRequest>, Streaming<PipelineResponse>) {
    let (tx, rx) = mpsc::channel(16);
    let replies = client
        .pipeline(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .expect("the daemon opened the stream")
        .into_inner();
    (tx, replies)
}

/// A daemon on `cluster` with the test settings and `key` set to `value`.
async fn start_with(cluster: &Cluster, key: &str, value: &str) -> Daemon {
    let mut env = test_env(cluster);
    env.insert(key.into(), value.into());
    Daemon::start_with(env).await
}

fn call(id: u64, call: Call) -> PipelineRequest {
    PipelineRequest { id, call: Some(call) }
}

fn acquire_call(id: u64, resource: &str, ttl: f64, wait: f64) -> PipelineRequest {
    call(id, Call::Acquire(acquire_req(resource, ttl, wait)))
}

/// The next reply, which must come.
async fn next(replies: &mut Streaming<PipelineResponse>) -> (u64, Answer) {
    let reply = replies
        .message()
        .await
        .expect("the stream broke")
        .expect("the stream ended");
    (reply.id, reply.result.expect("a reply carries a result"))
}

/// Scrapes until the gauge `series` reaches `want`, for as long as it
/// rises: panics when it has not risen for `stall`.
async fn until_climbed(daemon: &Daemon, series: &str, want: u64, stall: Duration) {
    let (mut seen, mut since) = (0, tokio::time::Instant::now());
    loop {
        let scraped = daemon.scrape().await;
        let now = (scraped.lines())
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or(0);
        if now >= want {
            return;
        }
        if now > seen {
            (seen, since) = (now, tokio::time::Instant::now());
        }
        assert!(
            since.elapsed() < stall,
            "{series} stuck at {now} of {want} for {stall:?}; the last scrape:\n{scraped}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn calls_on_a_stream_do_what_the_unary_calls_do_and_errors_do_not_end_it() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut unary = daemon.client().await;
    let pipeline = Pipeline::open(daemon.client().await).await.unwrap();

    let granted = pipeline.acquire(acquire_req("orders/1", 10.0, 0.0)).await.unwrap();
    let lease = granted.lease.expect("granted on the stream");
    assert!(granted.acquired);
    // The unary API sees the same lock.
    let refused = try_acquire(&mut unary, "orders/1", 10.0, 0.0).await;
    assert!(!refused.acquired, "{refused:?}");
    let refused_here = pipeline.acquire(acquire_req("orders/1", 10.0, 0.0)).await.unwrap();
    assert!(!refused_here.acquired && refused_here.attempts == 1, "{refused_here:?}");

    // Invalid fields are refused naming the field, and the stream goes on.
    let bad_ttl = pipeline
        .acquire(acquire_req("orders/2", 3600.0, 0.0))
        .await
        .unwrap_err();
    assert_eq!(bad_ttl.code(), Code::InvalidArgument, "{bad_ttl:?}");
    assert!(bad_ttl.message().contains("ttl"), "{}", bad_ttl.message());
    let bad_value = pipeline
        .release(ReleaseRequest {
            resource: "orders/1".into(),
            value: "zz".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad_value.code(), Code::InvalidArgument);
    assert!(bad_value.message().contains("value"), "{}", bad_value.message());

    let extended = pipeline
        .extend(ExtendRequest {
            resource: "orders/1".into(),
            value: lease.value.clone(),
            ttl: secs(20.0),
        })
        .await
        .unwrap();
    assert!(extended.extended && extended.validity.is_some(), "{extended:?}");
    let wrong = pipeline
        .release(ReleaseRequest {
            resource: "orders/1".into(),
            value: "0".repeat(40),
        })
        .await
        .unwrap();
    assert!(!wrong.released, "a wrong value released the lock");
    let released = pipeline
        .release(ReleaseRequest {
            resource: "orders/1".into(),
            value: lease.value.clone(),
        })
        .await
        .unwrap();
    assert!(released.released);
    let next_holder = must_acquire(&mut unary, "orders/1", 10.0, 0.0).await;
    assert!(next_holder.fencing_token > lease.fencing_token);
    daemon.stop().await;
}

#[tokio::test]
async fn a_call_without_a_kind_is_refused_naming_the_field() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let (tx, mut replies) = raw(&mut daemon.client().await).await;
    tx.send(PipelineRequest { id: 7, call: None }).await.unwrap();
    let (id, answer) = next(&mut replies).await;
    assert_eq!(id, 7);
    let Answer::Error(error) = answer else {
        panic!("expected an error, got {answer:?}")
    };
    assert_eq!(error.code, Code::InvalidArgument as i32);
    assert!(error.message.contains("call"), "{}", error.message);
    // The stream goes on.
    tx.send(acquire_call(8, "r", 5.0, 0.0)).await.unwrap();
    let (id, answer) = next(&mut replies).await;
    assert!(
        id == 8 && matches!(&answer, Answer::Acquire(a) if a.acquired),
        "{answer:?}"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn replies_come_as_calls_finish_not_in_the_order_sent() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut unary = daemon.client().await;
    let holder = must_acquire(&mut unary, "busy", 10.0, 0.0).await;
    let (tx, mut replies) = raw(&mut daemon.client().await).await;
    tx.send(acquire_call(1, "busy", 10.0, 20.0)).await.unwrap();
    daemon.until_waiters(1).await;
    tx.send(acquire_call(2, "free", 10.0, 0.0)).await.unwrap();
    let (id, answer) = next(&mut replies).await;
    assert!(
        id == 2 && matches!(&answer, Answer::Acquire(a) if a.acquired),
        "{id}: {answer:?}"
    );
    // The first call is still waiting; the holder's release hands it over.
    assert!(release(&mut unary, &holder).await);
    let (id, answer) = next(&mut replies).await;
    let Answer::Acquire(waited) = answer else {
        panic!("{answer:?}")
    };
    assert_eq!(id, 1);
    assert!(waited.acquired);
    assert!(waited.lease.unwrap().fencing_token > holder.fencing_token);
    daemon.stop().await;
}

#[tokio::test]
async fn tasks_sharing_one_stream_exclude_each_other_and_tokens_increase() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let pipeline = Pipeline::open(daemon.client().await).await.unwrap();
    let inside = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for task in 0..16 {
        let (pipeline, inside) = (pipeline.clone(), inside.clone());
        tasks.push(tokio::spawn(async move {
            let mut tokens = Vec::new();
            for round in 0..5 {
                // Distinct names alongside the shared one.
                let own = pipeline
                    .acquire(acquire_req(&format!("own/{task}/{round}"), 5.0, 0.0))
                    .await
                    .unwrap();
                assert!(own.acquired, "{own:?}");
                let shared = pipeline.acquire(acquire_req("shared", 5.0, 30.0)).await.unwrap();
                let lease = shared.lease.expect("the wait is long enough");
                assert!(!inside.swap(true, Ordering::SeqCst), "two holders at once");
                tokio::task::yield_now().await;
                inside.store(false, Ordering::SeqCst);
                let released = pipeline
                    .release(ReleaseRequest {
                        resource: lease.resource.clone(),
                        value: lease.value.clone(),
                    })
                    .await
                    .unwrap();
                assert!(released.released);
                tokens.push(lease.fencing_token);
            }
            tokens
        }));
    }
    let mut tokens = Vec::new();
    for task in tasks {
        let mine = task.await.unwrap();
        assert!(mine.windows(2).all(|w| w[0] < w[1]), "{mine:?}");
        tokens.extend(mine);
    }
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(tokens.len(), 80, "two leases shared a token");
    daemon.stop().await;
}

#[tokio::test]
async fn no_more_calls_than_the_limit_are_in_flight_and_the_rest_wait_unread() {
    let cluster = Cluster::start(5);
    let daemon = start_with(&cluster, "REDLOCKD__SERVER__MAX_REQUESTS_PER_CONNECTION", "2").await;
    let mut unary = daemon.client().await;
    let held: Vec<_> = futures::future::join_all((0..3).map(|i| {
        let mut client = unary.clone();
        async move { must_acquire(&mut client, &format!("held/{i}"), 20.0, 0.0).await }
    }))
    .await;
    let (tx, mut replies) = raw(&mut daemon.client().await).await;
    for i in 0..3 {
        tx.send(acquire_call(i, &format!("held/{i}"), 10.0, 20.0))
            .await
            .unwrap();
    }
    daemon.until_waiters(2).await;
    // The third is not read while two are in flight: still 2 waiters once
    // the first two wait.
    let waiting = |text: &str| text.contains("\nredlock_waiters 2\n");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(waiting(&daemon.scrape().await), "a third call was read");
    // Answering one lets the third in.
    assert!(release(&mut unary, &held[0]).await);
    let (id, answer) = next(&mut replies).await;
    assert!(
        id == 0 && matches!(&answer, Answer::Acquire(a) if a.acquired),
        "{answer:?}"
    );
    daemon.until_waiters(2).await;
    for lease in &held[1..] {
        assert!(release(&mut unary, lease).await);
    }
    let mut answered = Vec::new();
    for _ in 0..2 {
        let (id, answer) = next(&mut replies).await;
        assert!(matches!(&answer, Answer::Acquire(a) if a.acquired), "{answer:?}");
        answered.push(id);
    }
    answered.sort_unstable();
    assert_eq!(answered, [1, 2]);
    daemon.stop().await;
}

#[tokio::test]
async fn after_a_half_close_the_calls_in_flight_are_answered_then_the_stream_ends() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut unary = daemon.client().await;
    let holder = must_acquire(&mut unary, "r", 10.0, 0.0).await;
    let (tx, mut replies) = raw(&mut daemon.client().await).await;
    tx.send(acquire_call(1, "r", 10.0, 20.0)).await.unwrap();
    daemon.until_waiters(1).await;
    drop(tx);
    assert!(release(&mut unary, &holder).await);
    let (id, answer) = next(&mut replies).await;
    assert!(
        id == 1 && matches!(&answer, Answer::Acquire(a) if a.acquired),
        "{answer:?}"
    );
    assert!(replies.message().await.unwrap().is_none(), "the stream went on");
    daemon.stop().await;
}

#[tokio::test]
async fn a_client_that_leaves_while_waiting_leaves_no_lock_behind() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut unary = daemon.client().await;
    let holder = must_acquire(&mut unary, "r", 10.0, 0.0).await;
    let mut leaving = daemon.client().await;
    let (tx, replies) = raw(&mut leaving).await;
    tx.send(acquire_call(1, "r", 10.0, 20.0)).await.unwrap();
    daemon.until_waiters(1).await;
    // Cancel: the stream and its connection go.
    drop((tx, replies, leaving));
    daemon.until_waiters(0).await;
    assert!(release(&mut unary, &holder).await);
    // Nobody took it on the departed client's behalf.
    let after = must_acquire(&mut unary, "r", 10.0, 0.0).await;
    assert!(after.fencing_token > holder.fencing_token);
    daemon.stop().await;
}

#[tokio::test]
async fn a_daemon_shutting_down_answers_and_ends_its_streams_with_unavailable() {
    let cluster = Cluster::start(5);
    // Longer than the test waits: only ending the stream lets it stop.
    let daemon = start_with(&cluster, "REDLOCKD__SERVER__SHUTDOWN_GRACE", "5m").await;
    let pipeline = Pipeline::open(daemon.client().await).await.unwrap();
    let lease = pipeline
        .acquire(acquire_req("r", 10.0, 0.0))
        .await
        .unwrap()
        .lease
        .unwrap();
    let (tx, mut replies) = raw(&mut daemon.client().await).await;
    tx.send(acquire_call(1, "x", 10.0, 0.0)).await.unwrap();
    next(&mut replies).await;
    let stopping = tokio::spawn(daemon.stop());
    let ended = replies.message().await.expect_err("the stream ended without a status");
    assert_eq!(ended.code(), Code::Unavailable, "{ended:?}");
    assert!(ended.message().contains("shutting down"), "{}", ended.message());
    // A call after the end is refused at once, not lost in a queue.
    let late = pipeline
        .release(ReleaseRequest {
            resource: "r".into(),
            value: lease.value,
        })
        .await
        .unwrap_err();
    assert_eq!(late.code(), Code::Unavailable, "{late:?}");
    tokio::time::timeout(std::time::Duration::from_secs(60), stopping)
        .await
        .expect("the daemon waited out its grace period")
        .unwrap();
}

#[tokio::test]
async fn an_oversized_call_ends_the_stream_with_out_of_range_after_the_calls_in_flight() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut unary = daemon.client().await;
    let holder = must_acquire(&mut unary, "r", 10.0, 0.0).await;
    let (tx, mut replies) = raw(&mut daemon.client().await).await;
    tx.send(acquire_call(1, "r", 10.0, 20.0)).await.unwrap();
    daemon.until_waiters(1).await;
    let mut huge = acquire_call(2, "big", 5.0, 0.0);
    if let Some(Call::Acquire(request)) = &mut huge.call {
        request.owner = "x".repeat(8 * 1024);
    }
    tx.send(huge).await.unwrap();
    tx.send(acquire_call(3, "after", 5.0, 0.0)).await.unwrap();
    assert!(release(&mut unary, &holder).await);
    let (id, answer) = next(&mut replies).await;
    assert!(
        id == 1 && matches!(&answer, Answer::Acquire(a) if a.acquired),
        "{answer:?}"
    );
    let ended = replies
        .message()
        .await
        .expect_err("the stream went on past the oversized call");
    assert_eq!(ended.code(), Code::OutOfRange, "{ended:?}");
    assert!(ended.message().contains("4096"), "{}", ended.message());
    // Nothing after it was taken.
    assert!(try_acquire(&mut unary, "after", 5.0, 0.0).await.acquired);
    daemon.stop().await;
}

#[tokio::test]
async fn calls_in_flight_are_answered_even_while_the_client_reads_no_reply() {
    let cluster = Cluster::start(5);
    let daemon = start_with(&cluster, "REDLOCKD__SERVER__MAX_REQUESTS_PER_CONNECTION", "2000").await;
    // HTTP/2's own 64 KiB windows (hyper's client asks for 2 MiB).
    let channel = Channel::from_shared(format!("http://{}", daemon.addr))
        .unwrap()
        .initial_stream_window_size(65_535)
        .initial_connection_window_size(65_535)
        .connect()
        .await
        .unwrap();
    let (tx, mut replies) = raw(&mut LockClient::new(channel)).await;
    // Far more replies than the stream's window holds while the client
    // reads none: every call must still run to the end.
    const CALLS: u64 = 1500;
    // A burst this size on a busy machine outruns the node timeout in the
    // daemon's own queue to each master, and a round that waited that long
    // is answered UNAVAILABLE (docs/design.md#batching); with a wait the
    // daemon tries again, as for any caller that asks it to wait.
    const WAIT: f64 = 10.0;
    for i in 0..CALLS {
        tx.send(acquire_call(i, &format!("unread/{i}"), 30.0, WAIT))
            .await
            .unwrap();
    }
    // However slow the machine, the count climbs while calls run; a call is
    // answered within its wait, so none done in a wait is a stuck stream.
    until_climbed(&daemon, "redlock_locks_held", CALLS, Duration::from_secs_f64(WAIT)).await;
    let mut granted = 0;
    for _ in 0..CALLS {
        let (_, answer) = next(&mut replies).await;
        assert!(matches!(&answer, Answer::Acquire(a) if a.acquired), "{answer:?}");
        granted += 1;
    }
    assert_eq!(granted, CALLS);
    daemon.stop().await;
}

#[tokio::test]
async fn a_grant_whose_caller_stopped_waiting_is_released_by_the_client_at_once() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut unary = daemon.client().await;
    let holder = must_acquire(&mut unary, "r", 30.0, 0.0).await;
    let pipeline = Pipeline::open(daemon.client().await).await.unwrap();
    let waiting = {
        let pipeline = pipeline.clone();
        tokio::spawn(async move { pipeline.acquire(acquire_req("r", 30.0, 20.0)).await })
    };
    daemon.until_waiters(1).await;
    // The caller gives up (a timeout, a cancelled task); the call goes on.
    waiting.abort();
    assert!(release(&mut unary, &holder).await);
    // The lock went to the abandoned call, and the client gave it back: it
    // is free long before its 30 s TTL.
    let after = must_acquire(&mut unary, "r", 5.0, 10.0).await;
    assert!(after.fencing_token > holder.fencing_token);
    // The stream still serves.
    let more = pipeline.acquire(acquire_req("other", 5.0, 0.0)).await.unwrap();
    assert!(more.acquired);
    daemon.stop().await;
}
