//! Elections through the Rust client library (`clients/rust`) against real
//! daemons and five real masters (docs/design.md#elections): a campaign's
//! guard with its term, proclaim and resign on it and by term, the next
//! candidate after a drop; loss told before the validity runs out when
//! three masters die; the client's own deadline when the daemon is frozen
//! (SIGSTOP); observe and watch as streams.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use redlockd_client::proto::{WatchEvent, WatchResponse};
use redlockd_client::{
    AcquireOptions, CampaignOptions, Client, Error, Leader, LeaderStream, Lost, Options, WatchStream,
};
use tokio::time::Instant;

use crate::support::rig::BinaryDaemon;
use crate::support::{Cluster, Daemon, test_env};

async fn client_at(addr: std::net::SocketAddr) -> Client {
    Client::connect(&addr.to_string(), Options::default()).await.unwrap()
}

fn options(value: &str) -> CampaignOptions {
    CampaignOptions::new().value(value).ttl(Duration::from_secs(2))
}

/// Calls `call` again, up to five times, while it fails with UNAVAILABLE:
/// a read of the masters (`Leader`, and the one `Proclaim` and `Resign` by
/// term make) may find no majority within the tests' 100 ms node timeout
/// on a loaded machine, and says so rather than guess.
pub(crate) async fn retried<T, F: Future<Output = Result<T, Error>>>(call: impl Fn() -> F) -> Result<T, Error> {
    let mut tries = 0;
    loop {
        match call().await {
            Err(Error::Unavailable { .. }) if tries < 4 => tries += 1,
            done => return done,
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Who leads `election`, read until a majority answers.
pub(crate) async fn leader_of(client: &Client, election: &str) -> Option<Leader> {
    retried(|| client.leader(election)).await.expect("a majority answered")
}

/// The next state an observer sees, within `within`.
async fn next_state(observer: &mut LeaderStream, within: Duration) -> Option<Leader> {
    tokio::time::timeout(within, observer.next())
        .await
        .expect("the observer was told in time")
        .expect("the stream goes on")
        .expect("no error")
}

/// Observes `election` and reads its first state. A first read without a
/// majority is an error by design (docs/design.md#observe-and-watch); on a
/// loaded machine the test's 100 ms node timeout can cause one: try again.
async fn observe(client: &Client, election: &str) -> (LeaderStream, Option<Leader>) {
    for _ in 0..5 {
        let mut observer = client.observe(election).await.unwrap();
        match tokio::time::timeout(Duration::from_secs(5), observer.next()).await {
            Ok(Some(Ok(first))) => return (observer, first),
            Ok(Some(Err(Error::Unavailable { .. }))) => {}
            other => panic!("no first state: {other:?}"),
        }
    }
    panic!("five first reads of {election} without a majority");
}

/// The next change a watch sees, within 3 s.
async fn next(watch: &mut WatchStream) -> WatchResponse {
    tokio::time::timeout(Duration::from_secs(3), watch.next())
        .await
        .expect("told in time")
        .expect("the stream goes on")
        .expect("no error")
}

/// Polls `participants` until it lists exactly `want`.
async fn until_participants(client: &Client, election: &str, want: &[&str]) {
    for _ in 0..100 {
        if client.participants(election).await.unwrap() == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{election}'s participants never became {want:?}");
}

#[tokio::test]
async fn a_campaign_leads_proclaims_and_resigns_on_drop_and_by_term() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let client = client_at(daemon.addr).await;
    assert_eq!(leader_of(&client, "jobs").await, None);

    let a = client.campaign("jobs", "a", options("10.0.0.1")).await.unwrap();
    assert!(a.is_leading() && a.valid_until().is_some_and(|until| until > Instant::now()));
    let read = leader_of(&client, "jobs").await.expect("a leader");
    assert_eq!((read.candidate.as_str(), read.term), ("a", a.term()));
    assert_eq!(read.value, b"10.0.0.1");

    // Proclaimed on the guard; a stale term refused by name, nothing changed.
    a.proclaim("10.0.0.2").await.unwrap();
    assert_eq!(a.value(), b"10.0.0.2");
    assert_eq!(leader_of(&client, "jobs").await.unwrap().value, b"10.0.0.2");
    match retried(|| client.proclaim("jobs", a.term() - 1, "stale")).await {
        Err(Error::FailedPrecondition(message)) => assert!(message.contains(&a.term().to_string()), "{message}"),
        other => panic!("a stale term was not refused: {other:?}"),
    }
    assert_eq!(leader_of(&client, "jobs").await.unwrap().value, b"10.0.0.2");

    // A second candidate queues; dropping the first guard resigns at once.
    let queued = client.clone();
    let b = tokio::spawn(async move { queued.campaign("jobs", "b", options("B")).await });
    until_participants(&client, "jobs", &["b"]).await;
    let (first_term, gone) = (a.term(), Instant::now());
    drop(a);
    let b = tokio::time::timeout(Duration::from_secs(10), b)
        .await
        .expect("b elected after the drop")
        .unwrap()
        .unwrap();
    assert!(gone.elapsed() < Duration::from_secs(2), "{:?}", gone.elapsed());
    assert!(b.term() > first_term, "{} > {first_term}", b.term());
    assert_eq!(b.value(), b"B");

    // Resigned by term from outside: the guard is told, the election is empty.
    retried(|| client.resign("jobs", b.term())).await.unwrap();
    let why = tokio::time::timeout(Duration::from_secs(5), b.lost())
        .await
        .expect("told");
    assert!(matches!(why, Lost::Resigned(_)), "{why:?}");
    assert!(!b.is_leading() && b.valid_until().is_none());
    assert_eq!(leader_of(&client, "jobs").await, None);
    assert!(matches!(b.proclaim("late").await, Err(Error::LockLost(_))));

    // A guard resigned by hand frees the election for the next term.
    let c = client.campaign("jobs", "c", options("")).await.unwrap();
    assert!(c.term() > first_term);
    c.resign().await.unwrap();
    assert_eq!(leader_of(&client, "jobs").await, None);

    // Bad input, named before anything is sent; the TTL by the daemon.
    for (election, candidate, options, field) in [
        ("", "a", options(""), "election"),
        ("e", "", options(""), "candidate"),
        ("e", "a", CampaignOptions::new().value(vec![b'x'; 4097]), "value"),
        ("e", "a", CampaignOptions::new().ttl(Duration::from_millis(10)), "ttl"),
    ] {
        match client.campaign(election, candidate, options).await {
            Err(Error::InvalidArgument(message)) => assert!(message.contains(field), "{field}: {message}"),
            other => panic!("a bad {field} was accepted: {other:?}"),
        }
    }
    daemon.stop().await;
}

#[tokio::test]
async fn a_leader_is_told_lost_before_its_validity_runs_out_when_three_masters_die() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let client = client_at(daemon.addr).await;
    let leader = Arc::new(client.campaign("fragile", "a", options("")).await.unwrap());
    // The latest validity the campaign promised, followed until the loss.
    let watched = leader.clone();
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
    let why = tokio::time::timeout(Duration::from_secs(10), leader.lost())
        .await
        .expect("never told lost");
    let lost_at = Instant::now();
    let last_valid = last_valid.await.unwrap().expect("a validity was promised");
    // Told by the daemon, not found out by the client's own deadline.
    assert!(matches!(why, Lost::Told(_)), "{why:?}");
    assert!(
        lost_at <= last_valid,
        "told lost {:?} after the validity ran out",
        lost_at - last_valid
    );
    assert!(!leader.is_leading());
    daemon.stop().await;
}

#[tokio::test]
async fn a_leader_stops_on_its_own_deadline_when_the_daemon_is_frozen() {
    let cluster = Cluster::start(5);
    let mut daemon = BinaryDaemon::start(test_env(&cluster)).await;
    let client = client_at(daemon.addr).await;
    let leader = client.campaign("frozen", "a", options("")).await.unwrap();
    let first_term = leader.term();
    daemon.pause();
    // Whatever was on its way before the freeze has arrived.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let promised = leader.valid_until().expect("leading");
    assert!(
        promised > Instant::now(),
        "the validity ran out before the test froze the daemon"
    );
    // No word can come from a frozen daemon: only the client's clock ends it.
    let why = tokio::time::timeout(Duration::from_secs(5), leader.lost())
        .await
        .expect("still leading past its validity, with the daemon frozen");
    let stopped = Instant::now();
    assert_eq!(why, Lost::Deadline);
    // Told before the validity ends, by the client's own margin
    // (clients/rust/src/hold.rs: LOST_MARGIN), never after it.
    assert!(
        stopped < promised,
        "told {:?} after the validity ran out",
        stopped - promised
    );
    assert!(
        promised - stopped <= redlockd_client::LOST_MARGIN,
        "told {:?} before the validity ran out, more than the margin",
        promised - stopped
    );
    assert!(!leader.is_leading() && leader.valid_until().is_none());
    daemon.resume();
    // Thawed, the daemon elects the next candidate with a larger term.
    let next = tokio::time::timeout(Duration::from_secs(15), client.campaign("frozen", "b", options("")))
        .await
        .expect("elected after the thaw")
        .unwrap();
    assert!(next.term() > first_term);
    drop(leader);
    daemon.kill();
}

#[tokio::test]
async fn observe_follows_the_leader_and_watch_the_holder() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let client = client_at(daemon.addr).await;

    let (mut observer, first) = observe(&client, "cron").await;
    assert_eq!(first, None);
    let a = client.campaign("cron", "a", options("A")).await.unwrap();
    // A grant whose record writes the daemon judged short of a majority is
    // let go and taken again with a larger term; a majority may still
    // have read that first record, so an observer can pass on a lower
    // term of the same candidate (or nobody) before the elected one.
    let seen = loop {
        let seen = next_state(&mut observer, Duration::from_secs(3)).await;
        match seen {
            Some(seen) if seen.term == a.term() => break seen,
            Some(ref lower) => assert!(lower.term < a.term() && lower.candidate == "a", "{lower:?}"),
            None => {}
        }
    };
    assert_eq!(seen.candidate, "a");
    assert_eq!(seen.value, b"A");
    assert!(seen.since.is_some());
    a.proclaim("A2").await.unwrap();
    let seen = next_state(&mut observer, Duration::from_secs(3))
        .await
        .expect("a leader");
    assert_eq!((seen.value.as_slice(), seen.term), (&b"A2"[..], a.term()));
    a.resign().await.unwrap();
    assert_eq!(next_state(&mut observer, Duration::from_secs(3)).await, None);

    let mut watch = client.watch("w").await.unwrap();
    let first = next(&mut watch).await;
    assert_eq!((first.event(), first.held), (WatchEvent::Current, false));
    let taken = AcquireOptions::new().ttl(Duration::from_secs(10)).owner("worker-1");
    let lease = client.acquire("w", taken).await.unwrap().expect("free");
    let seen = next(&mut watch).await;
    assert_eq!(seen.event(), WatchEvent::Acquired, "{seen:?}");
    assert_eq!(seen.holder.map(|h| h.owner), Some("worker-1".to_owned()));
    assert!(lease.release().await.unwrap());
    let seen = next(&mut watch).await;
    assert_eq!((seen.event(), seen.held), (WatchEvent::Released, false), "{seen:?}");
    daemon.stop().await;
}
