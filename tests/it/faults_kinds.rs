//! The fault suite for the kinds of lock beyond the mutex (docs/safety.md#where-each-claim-is-tested):
//! readers and writers, permits, sets and reentrant locks, each through kill -9 of two masters and their
//! empty restarts, checked by the history checker.

use crate::support;

use std::time::Duration;

use support::rig::Rig;
use tokio::time::{Instant, sleep};

use crate::faults::mixed_scenario;

/// Readers and writers (docs/design.md#shared-locks) through kill -9 of two masters and their empty
/// restarts: no writer overlaps anyone, writers' tokens rise above every read, reads reach the last write.
#[tokio::test]
async fn readers_and_writers_through_kill_9_and_empty_restarts_are_safe() {
    let mut rig = Rig::start(2, &[]).await;
    let report = mixed_scenario(
        &mut rig,
        (2, 3),
        async |rig| {
            rig.cluster.masters[0].kill();
            rig.cluster.masters[3].kill();
        },
        async |rig| {
            rig.cluster.masters[0].restart_empty().unwrap();
            rig.cluster.masters[3].restart_empty().unwrap();
        },
    )
    .await;
    let grants: Vec<_> = (rig.history.ops().into_iter())
        .filter_map(|op| match op.reply {
            support::history::Reply::Granted(grant) => Some((op.complete, grant.shared)),
            _ => None,
        })
        .collect();
    let readers = grants.iter().filter(|g| g.1).count();
    assert!(readers >= 3 && grants.len() - readers >= 2, "{}", report.stats);
}

/// Five clients on a semaphore of two permits (docs/design.md#semaphores) through kill -9 of two
/// masters and their empty restarts: never more than two permits out, each slot exclusive, tokens rising
/// per slot.
#[tokio::test]
async fn permits_through_kill_9_and_empty_restarts_are_safe() {
    let mut rig = Rig::start(2, &[]).await;
    let work = rig
        .workload_of(&[(false, 2); 5], "r", Duration::from_millis(7500))
        .await;
    sleep(Duration::from_secs(1)).await;
    rig.cluster.masters[1].kill();
    rig.cluster.masters[4].kill();
    sleep(Duration::from_millis(2500)).await;
    rig.cluster.masters[1].restart_empty().unwrap();
    rig.cluster.masters[4].restart_empty().unwrap();
    let healed = Instant::now();
    work.await.unwrap();
    let report = rig.check("r", Some(healed));
    report.assert_safe();
    let slots: std::collections::BTreeSet<u32> = (rig.history.ops().into_iter())
        .filter_map(|op| match op.reply {
            support::history::Reply::Granted(grant) => Some(grant.slot),
            _ => None,
        })
        .collect();
    assert!(
        report.stats.grants >= 10 && slots.len() == 2,
        "{slots:?}: {}",
        report.stats
    );
}

/// Clients taking "r" alone and together with "s" as a set (docs/design.md#sets)
/// through kill -9 of two masters and their empty restarts: no holder of a member overlaps a set holding
/// it, tokens rise per member, and the fenced store takes "r"'s tokens only upward.
#[tokio::test]
async fn sets_and_single_locks_through_kill_9_and_empty_restarts_are_safe() {
    let mut rig = Rig::start(2, &[]).await;
    let mut clients = Vec::new();
    for i in 0..4 {
        let mut client = rig.client(i % 2, &format!("c{i}")).await;
        if i % 2 == 0 {
            client.set_with = Some("s".into());
        }
        clients.push(client);
    }
    let until = Instant::now() + Duration::from_millis(7500);
    let work = tokio::spawn(futures::future::join_all(clients.into_iter().map(
        move |mut c| async move {
            while Instant::now() < until {
                c.cycle("r", Duration::from_millis(30)).await;
            }
        },
    )));
    sleep(Duration::from_secs(1)).await;
    rig.cluster.masters[2].kill();
    rig.cluster.masters[3].kill();
    sleep(Duration::from_millis(2500)).await;
    rig.cluster.masters[2].restart_empty().unwrap();
    rig.cluster.masters[3].restart_empty().unwrap();
    let healed = Instant::now();
    work.await.unwrap();
    let report = rig.check("r", Some(healed));
    report.assert_safe();
    let set_grants = (rig.history.ops().into_iter())
        .filter(|op| op.resource == "s" && matches!(op.reply, support::history::Reply::Granted(_)))
        .count();
    assert!(
        set_grants >= 3 && report.stats.grants >= 10,
        "{set_grants} sets: {}",
        report.stats
    );
}

/// Two clients of daemon 0 sharing a reentrancy key (docs/design.md#reentrancy), and two plain clients,
/// through kill -9 of two masters and their empty restarts: the key's holders share one lock, held until
/// its last release, and nobody else overlaps it.
#[tokio::test]
async fn a_reentrant_lock_through_kill_9_and_empty_restarts_is_safe() {
    let mut rig = Rig::start(2, &[]).await;
    let mut clients = Vec::new();
    for (i, daemon) in [0, 0, 1, 0].into_iter().enumerate() {
        // The key's holders write to the store as one holder.
        let name = if i < 2 { "job".to_owned() } else { format!("c{i}") };
        let mut client = rig.client(daemon, &name).await;
        if i < 2 {
            client.reentrancy_key = "job-42".into();
        }
        clients.push(client);
    }
    let until = Instant::now() + Duration::from_millis(7500);
    let work = tokio::spawn(futures::future::join_all(clients.into_iter().map(
        move |mut c| async move {
            while Instant::now() < until {
                c.cycle("r", Duration::from_millis(60)).await;
            }
        },
    )));
    sleep(Duration::from_secs(1)).await;
    rig.cluster.masters[0].kill();
    rig.cluster.masters[4].kill();
    sleep(Duration::from_millis(2500)).await;
    rig.cluster.masters[0].restart_empty().unwrap();
    rig.cluster.masters[4].restart_empty().unwrap();
    let healed = Instant::now();
    work.await.unwrap();
    let report = rig.check("r", Some(healed));
    report.assert_safe();
    let mut values = std::collections::HashMap::new();
    for op in rig.history.ops() {
        if let support::history::Reply::Granted(grant) = op.reply {
            *values.entry(grant.value).or_insert(0) += 1;
        }
    }
    let reentered = values.values().filter(|n| **n > 1).count();
    assert!(
        reentered >= 2,
        "the key's lock was handed out again {reentered} times: {}",
        report.stats
    );
}
