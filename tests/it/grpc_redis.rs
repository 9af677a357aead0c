//! The gRPC API end to end: real daemons served on port 0 against five real
//! `redis-server` masters started on free loopback ports.

use crate::support;

use std::time::Duration;

use fred::prelude::KeysInterface;
use redlockd_client::proto::{AcquireRequest, ExtendRequest, FailureReason, ReleaseRequest};
use support::*;
use tonic::Code;

#[tokio::test]
async fn two_clients_exclude_each_other_until_the_holder_releases() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let (mut a, mut b) = (daemon.client().await, daemon.client().await);

    let lease = must_acquire(&mut a, "orders/1", 10.0, 0.0).await;
    let refused = try_acquire(&mut b, "orders/1", 10.0, 0.0).await;
    assert!(!refused.acquired);
    assert_eq!(refused.reason(), FailureReason::Taken);
    assert_eq!(refused.attempts, 1);
    assert!(refused.lease.is_none());

    assert!(release(&mut a, &lease).await);
    let second = must_acquire(&mut b, "orders/1", 10.0, 0.0).await;
    assert!(second.fencing_token > lease.fencing_token);
    assert_ne!(second.value, lease.value);
    daemon.stop().await;
}

#[tokio::test]
async fn each_later_holder_gets_a_larger_token_also_through_two_daemons() {
    let cluster = Cluster::start(5);
    let one = Daemon::start(&cluster).await;
    let two = Daemon::start(&cluster).await;
    let mut clients = [one.client().await, two.client().await];
    let mut last = 0;
    for round in 0..20 {
        let client = &mut clients[round % 2];
        let lease = must_acquire(client, "shared", 5.0, 2.0).await;
        assert!(
            lease.fencing_token > last,
            "round {round}: {} after {last}",
            lease.fencing_token
        );
        last = lease.fencing_token;
        assert!(release(client, &lease).await);
    }
    one.stop().await;
    two.stop().await;
}

#[tokio::test]
#[allow(clippy::disallowed_methods, reason = "compares with the masters' wall clock")]
async fn tokens_come_from_the_nodes_clock_and_keep_every_digit() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    // Every master is in the round, so every one stores a counter.
    daemon.until_usable(5).await;
    let mut client = daemon.client().await;
    let lease = must_acquire(&mut client, "clock", 5.0, 0.0).await;
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64;
    // The node's clock (µs) rounded up to 2^20, the same on every master
    // (docs/design.md#the-fencing-token): the first grant of a bucket.
    let counter = lease.fencing_token / 16;
    assert!(
        counter <= now_us + (1 << 20) && counter + 60_000_000 > now_us,
        "counter {counter} vs now {now_us}"
    );
    assert_eq!(counter % (1 << 20), 0, "counter {counter} is not a seed");
    // Every counter is stored as a plain integer, never as 1.7e+15.
    for i in 0..5 {
        let raw = cluster.fence(i, "clock").await.expect("the counter is seeded");
        assert!(raw.bytes().all(|b| b.is_ascii_digit()), "node {i} stores {raw:?}");
    }
    daemon.stop().await;
}

#[tokio::test]
async fn a_release_with_a_wrong_value_is_refused_and_the_lock_stays() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let lease = must_acquire(&mut client, "r", 10.0, 0.0).await;
    let forged = redlockd_client::proto::Lease {
        value: "0".repeat(40),
        ..lease.clone()
    };
    assert!(!release(&mut client, &forged).await);
    assert!(!try_acquire(&mut client, "r", 10.0, 0.0).await.acquired);
    assert!(release(&mut client, &lease).await);
    daemon.stop().await;
}

#[tokio::test]
async fn extend_works_while_held_and_is_refused_after_expiry() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let lease = must_acquire(&mut client, "r", 0.6, 0.0).await;
    let extend = ExtendRequest {
        resource: "r".into(),
        value: lease.value.clone(),
        ttl: secs(0.6),
    };
    let kept = client.extend(extend.clone()).await.unwrap().into_inner();
    assert!(kept.extended);
    assert!(kept.validity.is_some());
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let lost = client.extend(extend).await.unwrap().into_inner();
    assert!(!lost.extended);
    assert!(lost.validity.is_none());
    // The lock really is free.
    must_acquire(&mut client, "r", 5.0, 0.0).await;
    daemon.stop().await;
}

#[tokio::test]
async fn a_waiter_gets_the_lock_right_after_the_holder_releases() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let (mut holder, mut waiter) = (daemon.client().await, daemon.client().await);
    // A long TTL: if the waiter gets in, it is because of the release.
    let first = must_acquire(&mut holder, "queue", 60.0, 0.0).await;
    let waiting = tokio::spawn(async move { try_acquire(&mut waiter, "queue", 10.0, 20.0).await });
    daemon.until_waiters(1).await;
    assert!(!waiting.is_finished());
    assert!(release(&mut holder, &first).await);
    let reply = waiting.await.unwrap();
    assert!(reply.acquired, "{reply:?}");
    assert!(reply.lease.unwrap().fencing_token > first.fencing_token);
    daemon.stop().await;
}

#[tokio::test]
async fn two_dead_masters_still_grant_and_three_make_it_unavailable() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    must_acquire(&mut client, "warmup", 5.0, 2.0).await;

    cluster.kill(1);
    cluster.kill(3);
    let lease = must_acquire(&mut client, "r", 5.0, 0.0).await;
    assert!(release(&mut client, &lease).await);

    cluster.kill(4);
    let status = client.acquire(acquire_req("r2", 5.0, 0.0)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert!(status.message().contains("3 are needed"), "{}", status.message());
    daemon.stop().await;
}

#[tokio::test]
async fn masters_restarted_empty_keep_tokens_increasing() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let before = must_acquire(&mut client, "r", 5.0, 0.0).await;
    assert!(release(&mut client, &before).await);
    // Every master loses its keys, its fence counter and its script cache.
    for i in 0..5 {
        cluster.restart(i);
    }
    // Without quarantine the masters' clocks are the only backstop: a
    // counter seeded again lies above the ones handed out once the clock
    // has passed them (docs/design.md#the-fencing-token; seeds run up to ~1 s ahead).
    while cluster.clock_us(0).await <= before.fencing_token / 16 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let after = must_acquire(&mut client, "r", 5.0, 10.0).await;
    assert!(after.fencing_token > before.fencing_token);
    daemon.stop().await;
}

#[tokio::test]
async fn a_deadline_shorter_than_the_wait_ends_in_deadline_exceeded() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let lease = must_acquire(&mut client, "r", 30.0, 0.0).await;
    let mut request = tonic::Request::new(acquire_req("r", 5.0, 20.0));
    request.set_timeout(Duration::from_millis(800));
    let status = client.acquire(request).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(release(&mut client, &lease).await);
    daemon.stop().await;
}

#[tokio::test]
async fn every_invalid_input_is_refused_naming_the_field() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let ok = acquire_req("r", 5.0, 0.0);
    let acquires = [
        (
            AcquireRequest {
                resource: String::new(),
                ..ok.clone()
            },
            "resource",
        ),
        (
            AcquireRequest {
                resource: "x".repeat(257),
                ..ok.clone()
            },
            "resource",
        ),
        (
            AcquireRequest {
                resource: "bad\nname".into(),
                ..ok.clone()
            },
            "resource",
        ),
        (
            AcquireRequest {
                ttl: secs(0.01),
                ..ok.clone()
            },
            "ttl",
        ),
        (
            AcquireRequest {
                ttl: secs(3600.0),
                ..ok.clone()
            },
            "ttl",
        ),
        (
            AcquireRequest {
                ttl: Some(prost_types::Duration { seconds: -1, nanos: 0 }),
                ..ok.clone()
            },
            "ttl",
        ),
        (
            AcquireRequest {
                wait: secs(3600.0),
                ..ok.clone()
            },
            "wait",
        ),
        (
            AcquireRequest {
                owner: "o".repeat(300),
                ..ok.clone()
            },
            "owner",
        ),
    ];
    for (request, field) in acquires {
        let status = client.acquire(request.clone()).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{request:?}");
        assert!(
            status.message().contains(field),
            "{:?} does not name {field}",
            status.message()
        );
    }
    let lease = must_acquire(&mut client, "r", 5.0, 0.0).await;
    let bad_values = ["", "zz", &"A".repeat(40)];
    for value in bad_values {
        let status = client
            .release(ReleaseRequest {
                resource: "r".into(),
                value: value.into(),
            })
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(status.message().contains("value"), "{}", status.message());
        let status = client
            .extend(ExtendRequest {
                resource: "r".into(),
                value: value.into(),
                ttl: secs(5.0),
            })
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
    }
    let status = client
        .extend(ExtendRequest {
            resource: "r".into(),
            value: lease.value.clone(),
            ttl: secs(0.001),
        })
        .await
        .unwrap_err();
    assert!(status.message().contains("ttl"), "{}", status.message());
    // Nothing was lost on the way: the lock is still ours.
    assert!(release(&mut client, &lease).await);
    daemon.stop().await;
}

/// A release is answered once a quorum deleted the lock (docs/performance.md); the
/// masters that had not answered yet still delete it, even one that must
/// first be sent the script again (`NOSCRIPT`: its script cache was
/// flushed while the link to it was down), which only the call that was
/// left running can do.
#[tokio::test]
async fn a_release_answered_at_quorum_still_deletes_the_lock_on_the_slow_masters() {
    let cluster = Cluster::start(5);
    let (mut env, proxies) = env_with_proxies(&cluster, 3).await;
    // The held request must be answered (NOSCRIPT) after the link heals,
    // not time out first, however slow the machine.
    env.insert("REDLOCKD__REDIS__COMMAND_TIMEOUT".into(), "3s".into());
    let daemon = Daemon::start_with(env).await;
    let mut client = daemon.client().await;
    let lease = must_acquire(&mut client, "r", 30.0, 0.0).await;

    let key = support::keys::of("r");
    let key = key.as_str();
    let admins = cut_and_flush_scripts(&cluster, &proxies, 3).await;
    assert!(release(&mut client, &lease).await, "three masters held the lock");
    for admin in &admins {
        let held: Option<String> = admin.get(key).await.unwrap();
        // The key holds the value, then its holder record.
        assert_eq!(
            held.as_deref().and_then(|h| h.split('\n').next()),
            Some(lease.value.as_str()),
            "the delete cannot have arrived yet"
        );
    }
    for proxy in &proxies {
        proxy.set_mode(support::proxy::Mode::Pass);
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    for admin in &admins {
        loop {
            let held: Option<String> = admin.get(key).await.unwrap();
            if held.is_none() {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "a master still holds the released lock: the delete was lost with its NOSCRIPT reply"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    daemon.stop().await;
}
