//! Campaigns, leaders, observers and lock delays on in-memory masters with
//! Tokio's clock paused (docs/design.md#elections).

use std::time::Duration;

use tokio::time::{sleep, timeout};

use crate::locks::error::Error;
use crate::locks::session::tests::{Heard, TTL, holders, locks, plan, start};
use crate::locks::session::{Candidacy, Command, Input, Lost, Plan, Released};
use crate::locks::who::Who;
use crate::redlock::fake::Fault;
use crate::redlock::quorum::drift;

const NAME: &str = "lock:e";

fn campaign(candidate: &str, value: &[u8]) -> Box<Plan> {
    let mut planned = plan("e");
    planned.wait = Duration::from_secs(1);
    planned.campaign = Some(Box::new(Candidacy {
        candidate: candidate.into(),
        value: value.to_vec(),
    }));
    planned
}

fn term_of(heard: &[Heard]) -> u64 {
    match heard.first() {
        Some(Heard::Acquired { token, .. }) => *token,
        other => panic!("elected first, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn the_leader_read_back_has_exactly_the_term_it_was_elected_with() {
    let (locks, _, _) = locks();
    assert_eq!(locks.leader(NAME).await.unwrap(), None);
    let a = start(&locks, campaign("a", b"10.0.0.1"));
    sleep(Duration::from_millis(100)).await;
    let term = term_of(&a.events());
    let leader = locks.leader(NAME).await.unwrap().expect("a leader");
    assert_eq!(
        (leader.term, leader.candidate.as_str(), &leader.value[..]),
        (term, "a", &b"10.0.0.1"[..])
    );
    // Still after several extensions, well past the first TTL: the record
    // lives as long as the lock.
    sleep(TTL * 3).await;
    assert_eq!(locks.leader(NAME).await.unwrap().map(|l| l.term), Some(term));
}

#[tokio::test(start_paused = true)]
async fn candidates_queue_and_the_next_is_elected_with_a_larger_term_when_the_leader_resigns() {
    let (locks, _, _) = locks();
    let a = start(&locks, campaign("a", b"A"));
    sleep(Duration::from_millis(100)).await;
    let b = start(&locks, campaign("b", b"B"));
    // Several waits of a second each: b waits on.
    sleep(Duration::from_secs(4)).await;
    assert!(b.events().is_empty(), "{:?}", b.events());
    assert_eq!(locks.participants(NAME), vec!["b".to_owned()]);
    let first = term_of(&a.events());
    a.send.send(Input::Command(Command::Release)).unwrap();
    let heard = a.ended().await;
    assert!(matches!(
        heard.last(),
        Some((
            _,
            Heard::Released {
                why: Released::ByClient,
                ..
            }
        ))
    ));
    sleep(Duration::from_millis(500)).await;
    let second = term_of(&b.events());
    assert!(second > first);
    let leader = locks.leader(NAME).await.unwrap().expect("b leads");
    assert_eq!((leader.candidate.as_str(), leader.term), ("b", second));
}

#[tokio::test(start_paused = true)]
async fn a_proclaim_publishes_a_value_that_outlives_the_extensions() {
    let (locks, _, _) = locks();
    let a = start(&locks, campaign("a", b"v1"));
    sleep(Duration::from_millis(100)).await;
    a.send.send(Input::Command(Command::Proclaim(b"v2".to_vec()))).unwrap();
    sleep(Duration::from_millis(100)).await;
    assert_eq!(a.events().last(), Some(&Heard::Proclaimed(b"v2".to_vec())));
    sleep(TTL * 2).await;
    assert_eq!(locks.leader(NAME).await.unwrap().map(|l| l.value), Some(b"v2".to_vec()));
}

#[tokio::test(start_paused = true)]
async fn a_candidate_that_withdraws_while_waiting_is_not_elected_and_holds_nothing() {
    let (locks, engine, nodes) = locks();
    let a = start(&locks, campaign("a", b""));
    sleep(Duration::from_millis(100)).await;
    let b = start(&locks, campaign("b", b""));
    sleep(Duration::from_millis(1500)).await;
    b.send.send(Input::Command(Command::Release)).unwrap();
    let heard = b.ended().await;
    assert!(
        matches!(&heard[..], [(_, Heard::Withdrawn(Released::ByClient))]),
        "{heard:?}"
    );
    a.gone.send_replace(true);
    a.ended().await;
    sleep(Duration::from_secs(2)).await;
    assert_eq!(holders(&engine, &nodes, NAME), 0);
    assert_eq!(locks.leader(NAME).await.unwrap(), None);
}

#[tokio::test(start_paused = true)]
async fn a_proclaim_before_elected_ends_the_candidacy_with_an_invalid_argument() {
    let (locks, _, _) = locks();
    let _a = start(&locks, campaign("a", b""));
    sleep(Duration::from_millis(100)).await;
    let b = start(&locks, campaign("b", b""));
    sleep(Duration::from_millis(100)).await;
    b.send.send(Input::Command(Command::Proclaim(b"x".to_vec()))).unwrap();
    let heard = b.ended().await;
    assert!(
        matches!(&heard[..], [(_, Heard::Failed(e))] if e.contains("proclaim")),
        "{heard:?}"
    );
    assert_eq!(locks.leader(NAME).await.unwrap().map(|l| l.candidate), Some("a".into()));
}

#[tokio::test(start_paused = true)]
async fn a_stale_term_is_refused_naming_the_current_one_and_changes_nothing() {
    let (locks, _, _) = locks();
    let a = start(&locks, campaign("a", b"v1"));
    sleep(Duration::from_millis(100)).await;
    let term = term_of(&a.events());
    let who = Who::default();
    for refused in [
        locks.resign(NAME, term - 1, &who).await,
        locks.proclaim(NAME, term + 1, b"x").await,
    ] {
        match refused {
            Err(Error::NotLeading { current, .. }) => assert_eq!(current, Some(term)),
            other => panic!("refused, got {other:?}"),
        }
    }
    let leader = locks.leader(NAME).await.unwrap().expect("still leads");
    assert_eq!((leader.term, &leader.value[..]), (term, &b"v1"[..]));
    locks.proclaim(NAME, term, b"v3").await.unwrap();
    assert_eq!(locks.leader(NAME).await.unwrap().map(|l| l.value), Some(b"v3".to_vec()));
    // A resignation by term ends the session here at once.
    locks.resign(NAME, term, &who).await.unwrap();
    let heard = a.ended().await;
    assert!(
        matches!(
            heard.last(),
            Some((
                _,
                Heard::Released {
                    why: Released::Resigned,
                    ..
                }
            ))
        ),
        "{heard:?}"
    );
    assert_eq!(locks.leader(NAME).await.unwrap(), None);
    assert!(matches!(
        locks.resign(NAME, term, &who).await,
        Err(Error::NotLeading { current: None, .. })
    ));
}

#[tokio::test(start_paused = true)]
async fn a_leader_whose_masters_die_is_lost_before_its_validity_ends() {
    let (locks, _, nodes) = locks();
    let a = start(&locks, campaign("a", b""));
    sleep(Duration::from_millis(100)).await;
    let Some(Heard::Acquired { validity, .. }) = a.events().first().cloned() else {
        panic!("elected");
    };
    for node in &nodes[..3] {
        node.set_fault(Fault::Down);
    }
    let heard = a.ended().await;
    let (at, last) = heard.last().unwrap().clone();
    assert_eq!(last, Heard::Lost(Lost::NotExtendedInTime));
    assert!(at < validity, "lost at {at:?}, valid for {validity:?}");
}

/// ELECTED and EXTENDED tell what is left of the validity when they go
/// out: the record written after the grant, and extended after each
/// extension, takes a round of its own that comes off it
/// (docs/design.md#elections).
#[tokio::test(start_paused = true)]
async fn elected_and_extended_tell_the_validity_left_after_the_record_round() {
    let (locks, _, nodes) = locks();
    let round = Duration::from_millis(20);
    for node in &nodes {
        node.set_fault(Fault::Slow(round));
    }
    let a = start(&locks, campaign("a", b""));
    // ELECTED, then EXTENDED at about a third of the TTL.
    sleep(TTL / 2).await;
    let heard = a.heard();
    let lasts = TTL - drift(TTL, 0.01);
    let Some((at, Heard::Acquired { validity, .. })) = heard.first().cloned() else {
        panic!("elected first: {heard:?}");
    };
    // Counted from the start of the rounds, as the masters count the lock:
    // told after the record's round, that much less.
    assert!(at >= round * 2, "elected at {at:?}: the rounds were not slowed");
    assert_eq!(at + validity, lasts, "{heard:?}");
    let extended = heard.iter().find_map(|(_, heard)| match heard {
        Heard::Extended { validity } => Some(*validity),
        _ => None,
    });
    // The extension's round, then the record's.
    assert_eq!(extended, Some(lasts - round * 2), "{heard:?}");
}

#[tokio::test(start_paused = true)]
async fn a_lock_delay_keeps_the_lock_after_the_client_leaves_but_not_after_a_release() {
    let (locks, engine, nodes) = locks();
    let delay = Duration::from_secs(5);
    let mut delayed = plan("r");
    delayed.lock_delay = delay;
    let gone = start(&locks, delayed.clone());
    sleep(Duration::from_secs(1)).await;
    gone.gone.send_replace(true);
    gone.ended().await;
    sleep(Duration::from_millis(100)).await;
    assert_eq!(holders(&engine, &nodes, "lock:r"), 5, "kept for its lock delay");
    sleep(delay - Duration::from_millis(300)).await;
    assert_eq!(holders(&engine, &nodes, "lock:r"), 5, "kept until the delay is over");
    sleep(Duration::from_millis(400)).await;
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0, "free after it");
    let released = start(&locks, delayed);
    sleep(Duration::from_millis(100)).await;
    released.send.send(Input::Command(Command::Release)).unwrap();
    released.ended().await;
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0, "a release frees it at once");
}

#[tokio::test(start_paused = true)]
async fn an_observer_sees_the_state_then_every_change_with_terms_that_only_rise() {
    let (locks, engine, _) = locks();
    let mut observer = locks.observe(NAME);
    let within = |d| Duration::from_millis(100) + d;
    assert_eq!(observer.next().await.unwrap(), None);
    let a = start(&locks, campaign("a", b"A"));
    let seen = timeout(within(Duration::ZERO), observer.next())
        .await
        .expect("told at once")
        .unwrap();
    let first = seen.expect("a leads");
    assert_eq!((first.candidate.as_str(), &first.value[..]), ("a", &b"A"[..]));
    a.send.send(Input::Command(Command::Proclaim(b"A2".to_vec()))).unwrap();
    let seen = timeout(within(Duration::ZERO), observer.next())
        .await
        .expect("told at once")
        .unwrap();
    assert_eq!(seen.map(|l| l.value), Some(b"A2".to_vec()));
    // Taken behind this daemon's back: no announcement, the backstop
    // period (1 s) finds it.
    engine.force_release(NAME).await.unwrap();
    let seen = timeout(within(Duration::from_secs(1)), observer.next())
        .await
        .expect("within a period");
    assert_eq!(seen.unwrap(), None);
    a.ended().await;
    let b = start(&locks, campaign("b", b"B"));
    let seen = timeout(within(Duration::ZERO), observer.next())
        .await
        .expect("told at once")
        .unwrap();
    let second = seen.expect("b leads");
    assert!(second.term > first.term);
    // Nothing changes: nothing is told.
    assert!(timeout(Duration::from_secs(5), observer.next()).await.is_err());
    drop(b);
}

#[tokio::test(start_paused = true)]
async fn observers_woken_by_one_change_share_one_read_of_the_masters() {
    let (locks, _, nodes) = locks();
    let mut observers: Vec<_> = (0..20).map(|_| locks.observe(NAME)).collect();
    for observer in &mut observers {
        assert_eq!(observer.next().await.unwrap(), None);
    }
    let before = nodes[0].record_reads();
    let a = start(&locks, campaign("a", b"A"));
    let told = futures::future::join_all(
        observers
            .iter_mut()
            .map(|o| timeout(Duration::from_millis(100), o.next())),
    );
    for seen in told.await {
        let leader = seen.expect("told at once").unwrap().expect("a leads");
        assert_eq!(leader.candidate, "a");
    }
    // One read per change heard of (the grant, the record written), not
    // one per observer.
    let reads = nodes[0].record_reads() - before;
    assert!(reads <= 4, "20 observers, one election: {reads} reads of one master");
    drop(a);
}

#[tokio::test(start_paused = true)]
async fn an_observers_first_read_is_tried_again_before_it_is_an_error() {
    let (locks, _, nodes) = locks();
    for node in &nodes[..3] {
        node.set_fault(Fault::Down);
    }
    assert!(locks.observe(NAME).next().await.is_err(), "no quorum at all");
    let mut observer = locks.observe(NAME);
    let healing = nodes[..3].to_vec();
    tokio::spawn(async move {
        sleep(crate::locks::session::tests::NODE_TIMEOUT).await;
        for node in &healing {
            node.set_fault(Fault::None);
        }
    });
    assert_eq!(
        observer.next().await.unwrap(),
        None,
        "a quorum again by the second read"
    );
}
