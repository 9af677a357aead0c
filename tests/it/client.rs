//! The Rust client library (`clients/rust`) against a real daemon and five
//! real masters: contention as a value, FIFO hand-off through `hold`, loss
//! told before the validity runs out, release on drop and on a panic,
//! exact tokens above 2^53, errors by code, TLS with a bearer token, sets
//! extended and released in one call, `lost()` resolving when the daemon
//! releases a held lock on its own. (A client process killed with kill -9
//! is `binary::a_session_client_killed…`: `redlockctl run` holds its lock
//! through this library.)

use std::collections::HashMap;
use std::time::Duration;

use redlockd_client::{AcquireOptions, Client, Error, HoldOptions, Options, Tls};
use tokio::time::Instant;

use crate::support::certs::Pki;
use crate::support::{Cluster, Daemon, test_env};

async fn client_of(daemon: &Daemon) -> Client {
    Client::connect(&daemon.addr.to_string(), Options::default())
        .await
        .unwrap()
}

fn once(ttl_secs: u64) -> AcquireOptions {
    AcquireOptions::new().ttl(Duration::from_secs(ttl_secs))
}

#[tokio::test]
async fn a_second_holder_is_refused_then_gets_the_lock_with_a_larger_token() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let client = client_of(&daemon).await;
    let first = client.acquire("books", once(10)).await.unwrap().expect("a free lock");
    assert!(
        client.acquire("books", once(10)).await.unwrap().is_none(),
        "two holders"
    );
    let debug = format!("{first:?}");
    assert!(debug.contains("fencing_token") && !debug.contains("value"), "{debug}");
    let token = first.fencing_token();
    assert!(first.release().await.unwrap(), "not held to the end");
    let second = client.acquire("books", once(10)).await.unwrap().expect("released");
    assert!(second.fencing_token() > token);
    assert!(second.valid_until() > Instant::now());
    second.release().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn hold_with_a_wait_hands_the_lock_over_in_fifo_order() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let client = client_of(&daemon).await;
    let holding = client
        .hold("queue", HoldOptions::new().ttl(Duration::from_secs(5)))
        .await
        .unwrap();
    let waiting = |order: &'static str| {
        let client = client.clone();
        let options = HoldOptions::new()
            .ttl(Duration::from_secs(5))
            .wait(Duration::from_secs(20));
        tokio::spawn(async move { (order, client.hold("queue", options).await.unwrap()) })
    };
    let second = waiting("second");
    daemon.until_waiters(1).await;
    let third = waiting("third");
    daemon.until_waiters(2).await;
    let first_token = holding.fencing_token();
    assert!(holding.release().await.unwrap());
    let (order, next) = second.await.unwrap();
    assert_eq!(order, "second");
    assert!(next.fencing_token() > first_token);
    assert!(
        !third.is_finished(),
        "the third waiter got the lock while the second held it"
    );
    let second_token = next.fencing_token();
    assert!(next.release().await.unwrap());
    let (_, last) = third.await.unwrap();
    assert!(last.fencing_token() > second_token);
    last.release().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn a_held_lock_is_told_lost_before_its_validity_runs_out_when_three_masters_die() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let client = client_of(&daemon).await;
    let lock = client
        .hold("fragile", HoldOptions::new().ttl(Duration::from_secs(2)))
        .await
        .unwrap();
    let lock = std::sync::Arc::new(lock);
    // The latest validity the session promised, followed until the loss.
    let watched = lock.clone();
    let last_valid = tokio::spawn(async move {
        let mut last = None;
        while let Some(until) = watched.valid_until() {
            last = Some(until);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        last
    });
    for i in 0..3 {
        cluster.kill(i);
    }
    let reason = tokio::time::timeout(Duration::from_secs(10), lock.lost())
        .await
        .expect("never told lost");
    let lost_at = Instant::now();
    let last_valid = last_valid.await.unwrap().expect("a validity was promised");
    assert!(
        lost_at <= last_valid,
        "told lost {:?} after the validity ran out",
        lost_at - last_valid
    );
    assert!(lock.is_lost(), "{reason}");
    daemon.stop().await;
}

#[tokio::test]
async fn locks_are_released_when_dropped_and_when_their_task_panics() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let client = client_of(&daemon).await;
    // TTL 30 s: only a release frees them this soon.
    let quickly = AcquireOptions::new()
        .ttl(Duration::from_secs(30))
        .wait(Duration::from_secs(5));
    {
        let _session = client
            .hold("scoped", HoldOptions::new().ttl(Duration::from_secs(30)))
            .await
            .unwrap();
    }
    let again = client.acquire("scoped", quickly.clone()).await.unwrap();
    assert!(
        again.is_some(),
        "a session dropped at the end of its scope kept its lock"
    );
    let panicking = client.clone();
    let failed = tokio::spawn(async move {
        let _lease = panicking.acquire("panicky", once(30)).await.unwrap().unwrap();
        panic!("the work failed");
    })
    .await;
    assert!(failed.is_err());
    let after = client.acquire("panicky", quickly).await.unwrap();
    assert!(after.is_some(), "a lease dropped by a panicking task kept its lock");
    daemon.stop().await;
}

#[tokio::test]
async fn tokens_above_two_to_the_53_are_kept_exact() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    // Every master's counter just above 2^53 / 16: the next token is
    // (counter + 1) * 16 + 0, above 2^53, and odd counters make it a value
    // a double cannot hold.
    let counter: u64 = (1 << 53) / 16 + 12_345;
    cluster.set_fence("big", counter).await;
    let client = client_of(&daemon).await;
    let lease = client.acquire("big", once(10)).await.unwrap().unwrap();
    // The counter every master returned, and the index of the first of them
    // that answered in time (the round ends at a quorum).
    assert_eq!(lease.fencing_token() / 16, counter + 1);
    assert!(lease.fencing_token() % 16 < 5);
    assert!(lease.fencing_token() > 1 << 53);
    lease.release().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn bad_arguments_and_missing_masters_come_back_as_typed_errors() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let client = client_of(&daemon).await;
    // Checked before anything is sent, with the daemon's words.
    let Err(Error::InvalidArgument(message)) = client.acquire("", once(10)).await else {
        panic!("an empty resource was accepted");
    };
    assert!(
        message.contains("resource") && message.contains("1 to 256 bytes"),
        "{message}"
    );
    // Checked by the daemon: a TTL outside its range.
    let short = AcquireOptions::new().ttl(Duration::from_millis(1));
    let Err(Error::InvalidArgument(message)) = client.acquire("r", short).await else {
        panic!("a 1 ms TTL was accepted");
    };
    assert!(message.contains("ttl"), "{message}");
    for i in 0..3 {
        cluster.kill(i);
    }
    match client.acquire("r", once(10)).await {
        Err(Error::Unavailable { nodes, needed, .. }) => {
            assert_eq!(needed, Some(3));
            assert_eq!(nodes.len(), 5, "{nodes:?}");
        }
        other => panic!("with three masters dead: {other:?}"),
    }
    daemon.stop().await;
}

#[tokio::test]
async fn tls_and_a_bearer_token_get_a_lock_and_a_wrong_token_does_not() {
    const TOKEN: &str = "client-lib-token-0123456789abcdef";
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new(dir.path());
    pki.ca("ca");
    pki.issue("ca", "server", "subjectAltName=IP:127.0.0.1");
    pki.issue("ca", "client", "extendedKeyUsage=clientAuth");
    let tenants = dir.path().join("tenants.toml");
    std::fs::write(
        &tenants,
        format!("[[tenant]]\nname = \"lib\"\ntoken = \"{TOKEN}\"\nprefixes = [\"lib/\"]\n"),
    )
    .unwrap();
    let cluster = Cluster::start(5);
    let mut env: HashMap<String, String> = test_env(&cluster);
    env.extend([
        ("REDLOCKD__SERVER__TLS_CERT_FILE".to_owned(), pki.file("server.pem")),
        ("REDLOCKD__SERVER__TLS_KEY_FILE".to_owned(), pki.file("server.key")),
        ("REDLOCKD__SERVER__TLS_CLIENT_CA_FILE".to_owned(), pki.file("ca.pem")),
        (
            "REDLOCKD__AUTH__TOKENS_FILE".to_owned(),
            tenants.to_string_lossy().into_owned(),
        ),
    ]);
    let daemon = Daemon::start_with(env).await;
    let tls = Tls {
        ca_pem: Some(pki.read("ca.pem")),
        identity: Some((pki.read("client.pem"), pki.read("client.key"))),
    };
    let addr = daemon.addr.to_string();
    let connect = |token: &str| {
        let options = Options {
            token: Some(token.to_owned()),
            tls: Some(tls.clone()),
        };
        Client::connect(&addr, options)
    };
    let client = connect(TOKEN).await.unwrap();
    let lease = client.acquire("lib/job", once(10)).await.unwrap().expect("a free lock");
    assert!(lease.release().await.unwrap());
    // A Pipeline stream opened by the client carries the token too.
    let pipeline = client.pipeline().await.unwrap();
    let request = redlockd_client::proto::AcquireRequest {
        resource: "lib/piped".into(),
        ..Default::default()
    };
    assert!(pipeline.acquire(request).await.unwrap().acquired);
    let Err(Error::PermissionDenied(_)) = client.acquire("other/job", once(10)).await else {
        panic!("a resource outside the tenant's prefixes was locked");
    };
    let stranger = connect("not-the-token-0123456789abcdefgh").await.unwrap();
    let Err(Error::Unauthenticated(_)) = stranger.acquire("lib/job", once(10)).await else {
        panic!("a wrong token was served");
    };
    daemon.stop().await;
}

#[tokio::test]
async fn acquire_many_takes_a_set_with_a_lease_per_member_released_on_drop() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let client = client_of(&daemon).await;
    let set = client
        .acquire_many(&["y", "x", "y"], once(10))
        .await
        .unwrap()
        .expect("a free set");
    let names: Vec<&str> = set.iter().map(|lease| lease.resource()).collect();
    assert_eq!(names, ["x", "y"]);
    assert!(
        client.acquire("x", once(10)).await.unwrap().is_none(),
        "a member is held"
    );
    assert!(client.acquire_many(&["x", "z"], once(10)).await.unwrap().is_none());
    drop(set);
    let wait = once(10).wait(Duration::from_secs(3));
    assert!(
        client.acquire("y", wait).await.unwrap().is_some(),
        "dropped members are released"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn extend_many_moves_every_members_validity_and_release_many_gives_the_set_back() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let client = client_of(&daemon).await;
    let mut set = client
        .acquire_many(&["m/a", "m/b"], once(1))
        .await
        .unwrap()
        .expect("a free set");
    assert!(
        client
            .extend_many(&mut set, Some(Duration::from_secs(20)))
            .await
            .unwrap()
    );
    for lease in &set {
        let left = lease.valid_until().saturating_duration_since(Instant::now());
        assert!(
            left > Duration::from_secs(15),
            "{lease:?}: {left:?} left after extending to 20 s"
        );
    }
    let mut other = client
        .acquire_many(&["m/c"], once(10))
        .await
        .unwrap()
        .expect("a free set");
    let mixed = client.extend_many(set.iter_mut().chain(other.iter_mut()), None).await;
    let Err(Error::InvalidArgument(why)) = mixed else {
        panic!("leases of two sets: {mixed:?}");
    };
    assert!(
        why.starts_with("invalid leases: they hold more than one value"),
        "{why}"
    );
    let none = client.extend_many(std::iter::empty(), None).await;
    assert!(
        matches!(&none, Err(Error::InvalidArgument(why)) if why.starts_with("invalid leases: 0 leases")),
        "{none:?}"
    );
    assert!(client.release_many(set).await.unwrap(), "held to the end");
    assert!(client.release_many(other).await.unwrap(), "held to the end");
    for name in ["m/a", "m/b", "m/c"] {
        assert!(
            client.acquire(name, once(10)).await.unwrap().is_some(),
            "{name} is free again"
        );
    }
    daemon.stop().await;
}

#[tokio::test]
async fn a_held_lock_the_daemon_releases_on_its_own_resolves_lost() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let client = client_of(&daemon).await;
    // max_hold used up: HOLD_EVENT_RELEASED, which this client never asked for.
    let capped = HoldOptions::new()
        .ttl(Duration::from_secs(10))
        .max_hold(Duration::from_millis(1500));
    let lock = client.hold("capped", capped).await.unwrap();
    assert!(!lock.is_lost());
    let reason = tokio::time::timeout(Duration::from_secs(5), lock.lost())
        .await
        .expect("lost() did not resolve within 5 s of max_hold");
    assert!(reason.contains("max_hold"), "{reason}");
    assert!(lock.is_lost() && lock.valid_until().is_none());
    // A shutdown releases every session: RELEASED again.
    let held = client.hold("held-at-shutdown", HoldOptions::new()).await.unwrap();
    let told = tokio::spawn(async move { held.lost().await });
    daemon.stop().await;
    let reason = tokio::time::timeout(Duration::from_secs(5), told)
        .await
        .expect("lost() did not resolve within 5 s of a shutdown")
        .unwrap();
    assert!(!reason.is_empty());
}
