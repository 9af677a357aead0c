//! Elections over gRPC against real masters and two daemons
//! (docs/design.md#elections): a campaign elected with the term a majority
//! reads back, observed from the other daemon, proclaimed and resigned by
//! term (a stale one refused), the next candidate elected when a leader's
//! client goes — at once, or only after its lock delay — and every bad
//! argument named.

use std::time::Duration;

use tokio::time::Instant;

use redlockd_client::proto::campaign_request::Request as Ask;
use redlockd_client::proto::election_client::ElectionClient;
use redlockd_client::proto::{
    CampaignEvent, CampaignProclaim, CampaignRequest, CampaignResponse, CampaignStart, LeaderRequest, LeaderResponse,
    ObserveRequest, ParticipantsRequest, ProclaimRequest, ResignRequest,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;
use tonic::{Code, Streaming};

use crate::support::{Cluster, Daemon, secs};

/// An open candidacy: send with `tx` (drop it to half-close), read `rx`.
struct Candidacy {
    tx: mpsc::Sender<CampaignRequest>,
    rx: Streaming<CampaignResponse>,
}

fn start(election: &str, candidate: &str, value: &[u8]) -> CampaignStart {
    CampaignStart {
        election: election.into(),
        candidate: candidate.into(),
        value: value.to_vec(),
        ttl: secs(2.0),
        ..Default::default()
    }
}

async fn campaign(client: &mut ElectionClient<Channel>, start: CampaignStart) -> Candidacy {
    let (tx, requests) = mpsc::channel(4);
    tx.send(CampaignRequest {
        request: Some(Ask::Start(start)),
    })
    .await
    .unwrap();
    let rx = client
        .campaign(ReceiverStream::new(requests))
        .await
        .expect("campaign")
        .into_inner();
    Candidacy { tx, rx }
}

impl Candidacy {
    async fn next(&mut self) -> Result<CampaignResponse, tonic::Status> {
        tokio::time::timeout(Duration::from_secs(20), self.rx.message())
            .await
            .expect("no campaign event within 20 s")
            .map(|m| m.expect("the stream ended"))
    }

    async fn expect(&mut self, event: CampaignEvent) -> CampaignResponse {
        loop {
            let message = self.next().await.expect("no error");
            if message.event() == CampaignEvent::Extended && event != CampaignEvent::Extended {
                continue;
            }
            assert_eq!(message.event(), event, "{message:?}");
            return message;
        }
    }

    async fn send(&self, request: Ask) {
        self.tx.send(CampaignRequest { request: Some(request) }).await.unwrap();
    }
}

async fn elections(daemon: &Daemon) -> ElectionClient<Channel> {
    ElectionClient::new(daemon.channel().await)
}

async fn leader(client: &mut ElectionClient<Channel>, election: &str) -> LeaderResponse {
    let request = LeaderRequest {
        election: election.into(),
    };
    client.leader(request).await.expect("leader").into_inner()
}

/// Reads an observer until `want` holds of a state, at most `within`.
async fn observe_until(
    observer: &mut Streaming<LeaderResponse>,
    seen: &mut Vec<LeaderResponse>,
    within: Duration,
    want: impl Fn(&LeaderResponse) -> bool,
) -> LeaderResponse {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let state = tokio::time::timeout_at(deadline, observer.message())
            .await
            .expect("the observer was told in time")
            .expect("no error")
            .expect("the stream goes on");
        seen.push(state.clone());
        if want(&state) {
            return state;
        }
    }
}

#[tokio::test]
async fn a_leader_is_elected_observed_elsewhere_proclaimed_resigned_by_term_and_followed() {
    let cluster = Cluster::start(5);
    let (one, two) = (Daemon::start(&cluster).await, Daemon::start(&cluster).await);
    one.until_usable(5).await;
    two.until_usable(5).await;
    let (mut here, mut there) = (elections(&one).await, elections(&two).await);
    let mut observer = (there
        .observe(ObserveRequest {
            election: "jobs".into(),
        })
        .await)
        .expect("observe")
        .into_inner();
    let mut seen = Vec::new();
    let first = observe_until(&mut observer, &mut seen, Duration::from_secs(5), |_| true).await;
    assert!(!first.elected, "no leader yet: {first:?}");

    let mut a = campaign(&mut here, start("jobs", "a", b"10.0.0.1")).await;
    let elected = a.expect(CampaignEvent::Elected).await;
    let term = elected.term;
    assert_eq!(elected.value, b"10.0.0.1");
    assert!(elected.valid_for.is_some());
    // The other daemon's observer hears of it, and Leader there says
    // exactly the term ELECTED gave.
    observe_until(&mut observer, &mut seen, Duration::from_secs(3), |s| s.term == term).await;
    let read = leader(&mut there, "jobs").await;
    assert!(read.elected);
    assert_eq!(
        (read.term, read.candidate.as_str(), &read.value[..]),
        (term, "a", &b"10.0.0.1"[..])
    );

    // A stale term is refused, naming the current one, and changes nothing.
    let stale = there
        .resign(ResignRequest {
            election: "jobs".into(),
            term: term - 1,
        })
        .await
        .expect_err("a stale term");
    assert_eq!(stale.code(), Code::FailedPrecondition);
    assert!(stale.message().contains(&term.to_string()), "{}", stale.message());
    let stale = there
        .proclaim(ProclaimRequest {
            election: "jobs".into(),
            term: term + 16,
            value: b"no".to_vec(),
        })
        .await
        .expect_err("a stale term");
    assert_eq!(stale.code(), Code::FailedPrecondition);
    assert_eq!(leader(&mut there, "jobs").await.value, b"10.0.0.1");

    // Proclaimed on the stream, then from the other daemon by term.
    a.send(Ask::Proclaim(CampaignProclaim {
        value: b"10.0.0.2".to_vec(),
    }))
    .await;
    a.expect(CampaignEvent::Proclaimed).await;
    observe_until(&mut observer, &mut seen, Duration::from_secs(3), |s| {
        s.value == b"10.0.0.2"
    })
    .await;
    there
        .proclaim(ProclaimRequest {
            election: "jobs".into(),
            term,
            value: b"10.0.0.3".to_vec(),
        })
        .await
        .expect("proclaim by term");
    observe_until(&mut observer, &mut seen, Duration::from_secs(3), |s| {
        s.value == b"10.0.0.3"
    })
    .await;

    // A second candidate queues on the other daemon, and is elected with a
    // larger term when the leader's client goes.
    let mut b = campaign(&mut there, start("jobs", "b", b"B")).await;
    let queued = async {
        for _ in 0..50 {
            let listed = (there
                .participants(ParticipantsRequest {
                    election: "jobs".into(),
                })
                .await)
                .unwrap()
                .into_inner();
            if listed.candidates == ["b"] {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    };
    assert!(queued.await, "b is queued on the other daemon");
    let gone = Instant::now();
    drop(a);
    let next = b.expect(CampaignEvent::Elected).await;
    let took = gone.elapsed();
    assert!(next.term > term, "{} > {term}", next.term);
    assert!(
        took < Duration::from_secs(2),
        "elected {took:?} after the leader went (no lock delay)"
    );
    observe_until(&mut observer, &mut seen, Duration::from_secs(3), |s| {
        s.term == next.term
    })
    .await;

    // Resigned by term from the daemon that did not elect it: its stream
    // finds out, the observer sees no leader.
    here.resign(ResignRequest {
        election: "jobs".into(),
        term: next.term,
    })
    .await
    .expect("resign by term");
    let ended = loop {
        match b.next().await {
            Ok(m) if m.event() == CampaignEvent::Extended => continue,
            other => break other,
        }
    };
    let ended = ended.expect("told, not an error");
    assert!(
        matches!(ended.event(), CampaignEvent::Resigned | CampaignEvent::Lost),
        "{ended:?}"
    );
    observe_until(&mut observer, &mut seen, Duration::from_secs(3), |s| !s.elected).await;

    // What the observer saw: terms that never went down, no state twice in
    // a row.
    let terms: Vec<u64> = seen.iter().filter(|s| s.elected).map(|s| s.term).collect();
    assert!(terms.windows(2).all(|w| w[0] <= w[1]), "{terms:?}");
    assert!(seen.windows(2).all(|w| w[0] != w[1]), "{seen:?}");
}

#[tokio::test]
async fn a_lock_delay_holds_the_next_candidate_back_after_the_leaders_client_goes() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let mut client = elections(&daemon).await;
    let delayed = CampaignStart {
        lock_delay: secs(3.0),
        ..start("cron", "a", b"")
    };
    let mut a = campaign(&mut client, delayed).await;
    a.expect(CampaignEvent::Elected).await;
    let mut b = campaign(&mut client, start("cron", "b", b"")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let gone = Instant::now();
    drop(a);
    b.expect(CampaignEvent::Elected).await;
    let took = gone.elapsed();
    assert!(
        took >= Duration::from_millis(2900),
        "elected {took:?} after the leader went, inside its lock delay"
    );
    // A resignation frees it at once, lock delay or not.
    let mut c = campaign(&mut client, start("cron", "c", b"")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let resigned = Instant::now();
    b.send(Ask::Resign(Default::default())).await;
    b.expect(CampaignEvent::Resigned).await;
    c.expect(CampaignEvent::Elected).await;
    assert!(resigned.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn bad_campaigns_and_calls_are_refused_naming_the_field() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let mut client = elections(&daemon).await;
    let refused = [
        (start("", "a", b""), "election"),
        (start("e", "", b""), "candidate"),
        (start("e", "a", &[0u8; 4097]), "value"),
        (
            CampaignStart {
                ttl: secs(0.1),
                ..start("e", "a", b"")
            },
            "ttl",
        ),
        (
            CampaignStart {
                lock_delay: secs(3600.0),
                ..start("e", "a", b"")
            },
            "lock_delay",
        ),
    ];
    for (bad, field) in refused {
        let mut candidacy = campaign(&mut client, bad).await;
        let error = candidacy.next().await.expect_err("refused");
        assert_eq!(error.code(), Code::InvalidArgument, "{error:?}");
        assert!(error.message().contains(field), "{field}: {}", error.message());
    }
    // A proclaim before ELECTED ends the candidacy; the leader is untouched.
    let mut a = campaign(&mut client, start("e", "a", b"A")).await;
    a.expect(CampaignEvent::Elected).await;
    let b = campaign(&mut client, start("e", "b", b"")).await;
    let mut b = b;
    b.send(Ask::Proclaim(CampaignProclaim { value: b"x".to_vec() })).await;
    let error = b.next().await.expect_err("refused");
    assert_eq!(error.code(), Code::InvalidArgument);
    assert!(error.message().contains("proclaim"), "{}", error.message());
    assert_eq!(leader(&mut client, "e").await.candidate, "a");
    // Unary calls: the field named, nothing changed.
    let error = client
        .resign(ResignRequest {
            election: "e".into(),
            term: 0,
        })
        .await
        .expect_err("no term");
    assert_eq!(error.code(), Code::InvalidArgument);
    assert!(error.message().contains("term"));
    let error = client
        .proclaim(ProclaimRequest {
            election: "e".into(),
            term: 1,
            value: vec![0; 4097],
        })
        .await
        .expect_err("too long");
    assert!(error.message().contains("value"), "{}", error.message());
    let error = client
        .leader(LeaderRequest { election: "\n".into() })
        .await
        .expect_err("a control character");
    assert!(error.message().contains("election"));
    assert_eq!(leader(&mut client, "e").await.candidate, "a");
    a.expect(CampaignEvent::Extended).await;
}
