//! Elections through the fault suite (docs/safety.md#where-each-claim-is-tested): six candidates on two
//! daemons campaign over and over while two masters are killed with kill -9 and restarted empty, and one is
//! frozen with SIGSTOP beyond the TTL; every leadership is recorded as a grant (its window from ELECTED's
//! arrival to the end of its last `valid_for`, or LOST, or the client's own stop), every write to a fenced
//! store carries the term, and two observers (one per daemon) record what they were told. The history
//! checker then finds no two leaders' intervals overlapping and terms rising in real-time order; every
//! observer's terms rise and end at the final state. The unsafe control — terms minted by two disjoint
//! sets of masters, not one quorum — is caught.

use crate::support;

use std::time::Duration;

use redlockd_client::proto::campaign_request::Request as Ask;
use redlockd_client::proto::election_client::ElectionClient;
use redlockd_client::proto::{
    CampaignEvent, CampaignRequest, CampaignStart, LeaderRequest, LeaderResponse, ObserveRequest,
};
use support::history::{FencedStore, Grant, History, Kind, Options, Reply, ViolationKind, check};
use support::proxy::Mode;
use support::rig::Rig;
use support::{Cluster, Daemon, secs};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, sleep_until};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

const ELECTION: &str = "leader";

/// One candidate campaigning until `until`: each leadership is recorded in `history` and written to
/// `fenced` with its term; it resigns after a while, or stops at LOST or at its own deadline.
async fn candidate(
    name: String,
    mut client: ElectionClient<Channel>,
    (history, fenced): (History, FencedStore),
    until: Instant,
) -> usize {
    let mut elected = 0;
    while Instant::now() < until {
        let (tx, requests) = mpsc::channel(4);
        let start = CampaignStart {
            election: ELECTION.into(),
            candidate: name.clone(),
            ttl: secs(1.0),
            ..Default::default()
        };
        let _ = tx
            .send(CampaignRequest {
                request: Some(Ask::Start(start)),
            })
            .await;
        let Ok(reply) = client.campaign(ReceiverStream::new(requests)).await else {
            sleep(Duration::from_millis(100)).await;
            continue;
        };
        let mut stream = reply.into_inner();
        // (value, term, own deadline, when to resign) while leading.
        let mut leading: Option<(String, u64, Instant, Instant)> = None;
        loop {
            let wake = match &leading {
                Some((_, _, deadline, resign_at)) => (*deadline).min(*resign_at).min(until),
                None => until,
            };
            let message = tokio::select! {
                message = stream.message() => message,
                () = sleep_until(wake) => {
                    // Our own deadline, the resignation we planned, or the end: stop using it first.
                    if let Some((value, ..)) = leading.take() {
                        let op = history.invoke(&name, ELECTION, Kind::Release(value));
                        history.complete(op, Reply::Released);
                    }
                    if Instant::now() >= until {
                        let _ = tx.send(CampaignRequest { request: Some(Ask::Resign(Default::default())) }).await;
                        return elected;
                    }
                    let _ = tx.send(CampaignRequest { request: Some(Ask::Resign(Default::default())) }).await;
                    // Leaving the stream: whatever it says next, we no longer lead.
                    break;
                }
            };
            let arrived = Instant::now();
            let Ok(Some(message)) = message else {
                if let Some((value, ..)) = leading.take() {
                    let op = history.invoke(&name, ELECTION, Kind::Release(value));
                    history.complete(op, Reply::Released);
                }
                break;
            };
            let valid_for = message
                .valid_for
                .and_then(|d| Duration::try_from(d).ok())
                .unwrap_or_default();
            match message.event() {
                CampaignEvent::Elected => {
                    elected += 1;
                    let value = format!("{name}/{}", message.term);
                    let op = history.invoke_at(&name, ELECTION, Kind::Acquire, arrived);
                    let grant = Grant {
                        token: message.term,
                        validity: valid_for,
                        value: value.clone(),
                        ..Grant::default()
                    };
                    history.complete_at(op, Reply::Granted(grant), arrived);
                    let resign_at = arrived + Duration::from_millis(fastrand::u64(200..900));
                    leading = Some((value, message.term, arrived + valid_for, resign_at));
                }
                CampaignEvent::Extended => {
                    if let Some((value, _, deadline, _)) = &mut leading {
                        let op = history.invoke_at(&name, ELECTION, Kind::Extend(value.clone()), arrived);
                        history.complete_at(op, Reply::Extended(valid_for), arrived);
                        *deadline = arrived + valid_for;
                    }
                }
                _ => {
                    // LOST, RESIGNED, NOT_ELECTED: stop now.
                    if let Some((value, ..)) = leading.take() {
                        let op = history.invoke_at(&name, ELECTION, Kind::Release(value), arrived);
                        history.complete_at(op, Reply::Released, arrived);
                    }
                    break;
                }
            }
            // A leader writes with its term while its own deadline has not passed.
            if let Some((_, term, deadline, _)) = &leading
                && Instant::now() < *deadline
            {
                let _ = fenced.write(&name, *term, format!("{name}@{term}"));
            }
        }
    }
    elected
}

/// An observer of the election on `client`, recording each state until `until`.
fn observer(mut client: ElectionClient<Channel>, until: Instant) -> JoinHandle<Vec<LeaderResponse>> {
    tokio::spawn(async move {
        let mut seen = Vec::new();
        let request = ObserveRequest {
            election: ELECTION.into(),
        };
        let Ok(reply) = client.observe(request).await else {
            return seen;
        };
        let mut stream = reply.into_inner();
        while let Ok(Ok(Some(state))) = tokio::time::timeout_at(until, stream.message()).await {
            seen.push(state);
        }
        seen
    })
}

/// Every observer's terms rise (a new leader, a higher term), no state comes twice in a row, and the
/// last one is `last`.
fn assert_observed(seen: &[LeaderResponse], last: &LeaderResponse) {
    assert!(!seen.is_empty(), "the observer was told nothing");
    let terms: Vec<u64> = seen.iter().filter(|s| s.elected).map(|s| s.term).collect();
    assert!(terms.windows(2).all(|w| w[0] <= w[1]), "terms went back: {terms:?}");
    assert!(seen.windows(2).all(|w| w[0] != w[1]), "a state twice in a row");
    let end = seen.last().unwrap();
    assert_eq!(
        (end.elected, end.term),
        (last.elected, last.term),
        "the observer ended elsewhere"
    );
}

/// Runs six candidates (three per daemon) and an observer per daemon for `run_for`, with `faults` from
/// 1 s on; returns the history, the fenced store and what the observers saw.
async fn campaign_through(
    daemons: &[&Daemon],
    run_for: Duration,
    faults: impl AsyncFnOnce(),
) -> (History, FencedStore, Vec<Vec<LeaderResponse>>, usize) {
    let (history, fenced) = (History::new(), FencedStore::new("fenced"));
    let until = Instant::now() + run_for;
    let mut observers = Vec::new();
    for daemon in daemons {
        observers.push(observer(
            ElectionClient::new(daemon.channel().await),
            until + Duration::from_secs(3),
        ));
    }
    let mut candidates = Vec::new();
    for i in 0..6 {
        let client = ElectionClient::new(daemons[i % daemons.len()].channel().await);
        let name = format!("c{i}");
        candidates.push(tokio::spawn(candidate(
            name,
            client,
            (history.clone(), fenced.clone()),
            until,
        )));
    }
    sleep(Duration::from_secs(1)).await;
    faults().await;
    let mut elected = 0;
    for candidate in candidates {
        elected += candidate.await.unwrap();
    }
    let mut seen = Vec::new();
    for observer in observers {
        seen.push(observer.await.unwrap());
    }
    (history, fenced, seen, elected)
}

/// ELECTED and every EXTENDED tell what is left of the validity when they go out: the record's round after the
/// grant, and its extension's after each extension, come off it (docs/design.md#elections). A leader counting
/// `valid_for` from the message's arrival must stop before the masters let its lock go. Here every command that
/// names a record key (`…:elected:…`) waits 150 ms in the proxies, and nothing else does.
#[tokio::test]
async fn elected_and_extended_leave_out_a_slow_record_round() {
    let cluster = Cluster::start(5);
    let (mut env, proxies) = support::env_with_proxies(&cluster, 0).await;
    // A round slowed 150 ms fits in a node timeout, with room for a loaded machine.
    env.insert("REDLOCKD__REDIS__NODE_TIMEOUT".into(), "400ms".into());
    env.insert("REDLOCKD__LOCK__MIN_TTL".into(), "2s".into());
    let daemon = Daemon::start_with(env).await;
    daemon.until_usable(5).await;
    let slow = Duration::from_millis(150);
    for proxy in &proxies {
        proxy.set_mode(Mode::DelayRequestsWith {
            needle: "elected:",
            delay: slow,
        });
    }
    // A session needs 8 node timeouts: 3.2 s.
    let ttl = Duration::from_secs(4);
    let (tx, requests) = mpsc::channel(4);
    let start = CampaignStart {
        election: "slow-record".into(),
        candidate: "c".into(),
        ttl: secs(ttl.as_secs_f64()),
        ..Default::default()
    };
    tx.send(CampaignRequest {
        request: Some(Ask::Start(start)),
    })
    .await
    .unwrap();
    let sent = Instant::now();
    let mut client = ElectionClient::new(daemon.channel().await);
    let mut stream = client
        .campaign(ReceiverStream::new(requests))
        .await
        .unwrap()
        .into_inner();
    let mut told = Vec::new();
    while told.len() < 2 {
        let message = tokio::time::timeout(Duration::from_secs(20), stream.message())
            .await
            .expect("no campaign event within 20 s")
            .unwrap()
            .expect("the stream ended");
        let valid_for: Duration = message.valid_for.expect("valid_for").try_into().unwrap();
        told.push((message.event(), sent.elapsed(), valid_for));
    }
    let [(CampaignEvent::Elected, elected_at, _), (CampaignEvent::Extended, ..)] = told[..] else {
        panic!("ELECTED, then EXTENDED: {told:?}");
    };
    assert!(
        elected_at >= slow,
        "elected {elected_at:?} after the start: the record was not slowed"
    );
    // Counted from the start of their rounds, the record's round after them: at most the TTL less that round.
    for (event, _, valid_for) in &told {
        assert!(
            *valid_for <= ttl - slow,
            "{event:?} valid for {valid_for:?}: the record's round did not come off it ({told:?})"
        );
    }
    drop(tx);
    daemon.stop().await;
}

#[tokio::test]
async fn one_leader_at_a_time_through_kill_9_empty_restarts_and_a_frozen_master() {
    let mut rig = Rig::start(2, &[("REDLOCKD__LOCK__WATCH_PERIOD", "200ms")]).await;
    let daemons: Vec<Daemon> = std::mem::take(&mut rig.daemons);
    let cluster = &mut rig.cluster;
    let (history, fenced, seen, elected) = campaign_through(
        &daemons.iter().collect::<Vec<_>>(),
        Duration::from_secs(10),
        async || {
            cluster.masters[0].kill();
            cluster.masters[3].kill();
            sleep(Duration::from_millis(1500)).await;
            // Back empty: quarantine keeps them out until repaired.
            cluster.masters[0].restart_empty().unwrap();
            cluster.masters[3].restart_empty().unwrap();
            sleep(Duration::from_millis(1500)).await;
            // Frozen beyond the TTL (1 s; lock.max_ttl 2 s), then thawed.
            cluster.masters[1].pause();
            sleep(Duration::from_millis(2500)).await;
            cluster.masters[1].resume();
        },
    )
    .await;
    let report = check(
        &history,
        &[&fenced],
        Options {
            drift_margin: Duration::from_millis(12),
            ..Options::default()
        },
    );
    println!("{}: {} elections won; {}", ELECTION, elected, report.stats);
    report.assert_safe();
    assert!(
        report.stats.grants >= 5,
        "too few leaderships to mean anything: {}",
        report.stats
    );
    // Everyone resigned: no leader, as every observer was last told.
    let mut client = ElectionClient::new(daemons[0].channel().await);
    let last = client
        .leader(LeaderRequest {
            election: ELECTION.into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!last.elected, "{last:?}");
    for observed in &seen {
        assert_observed(observed, &last);
    }
}

#[tokio::test]
async fn control_terms_from_two_sets_of_masters_are_caught_as_two_leaders() {
    // Two daemons each on masters of its own: each mints terms from its own quorum, so each elects a leader
    // of the "same" election at the same time — what a term minted by one master would also do.
    let (left, right) = (Cluster::start(5), Cluster::start(5));
    let (one, two) = (Daemon::start(&left).await, Daemon::start(&right).await);
    one.until_usable(5).await;
    two.until_usable(5).await;
    let (history, fenced, _, _) = campaign_through(&[&one, &two], Duration::from_secs(4), async || {}).await;
    let report = check(&history, &[&fenced], Options::default());
    assert!(
        report.has(ViolationKind::Overlap),
        "the checker missed two leaders at once:\n{report}"
    );
}
