//! The fault suite (docs/safety.md#where-each-claim-is-tested): real masters, two daemons each behind its
//! own fault proxy per master, contending clients, and the history checker.
//! Safe scenarios must pass the checker; the unsafe controls must be caught
//! by it — a checker that cannot fail proves nothing.

use crate::support;

use std::time::Duration;

use support::proxy::Mode;
use support::rig::{Rig, TTL};
use tokio::time::{Instant, sleep};

const CLIENTS: usize = 4;

/// Runs the workload on "r"; `fault` at 1 s, `heal` 2.5 s later, then 4 s
/// more. Returns the checked report (liveness counted from the heal).
async fn scenario(rig: &mut Rig, fault: impl AsyncFnOnce(&mut Rig), heal: impl AsyncFnOnce(&mut Rig)) {
    mixed_scenario(rig, (CLIENTS, 0), fault, heal).await;
}

/// `scenario` with `writers` exclusive clients and `readers` shared ones; returns the report.
pub(crate) async fn mixed_scenario(
    rig: &mut Rig,
    (writers, readers): (usize, usize),
    fault: impl AsyncFnOnce(&mut Rig),
    heal: impl AsyncFnOnce(&mut Rig),
) -> support::history::Report {
    let work = rig
        .mixed_workload(writers, readers, "r", Duration::from_millis(7500))
        .await;
    sleep(Duration::from_secs(1)).await;
    fault(rig).await;
    sleep(Duration::from_millis(2500)).await;
    heal(rig).await;
    let healed = Instant::now();
    work.await.unwrap();
    let report = rig.check("r", Some(healed));
    report.assert_safe();
    assert!(
        report.stats.grants >= 5,
        "too few grants to mean anything: {}",
        report.stats
    );
    report
}

async fn nothing(_: &mut Rig) {}

#[tokio::test]
async fn kill_9_of_one_and_then_two_masters_is_safe() {
    let mut rig = Rig::start(2, &[]).await;
    scenario(
        &mut rig,
        async |rig| {
            rig.cluster.masters[0].kill();
            sleep(Duration::from_millis(500)).await;
            rig.cluster.masters[3].kill();
        },
        // They come back empty: quarantine keeps them out for max_ttl.
        async |rig| {
            rig.cluster.masters[0].restart_empty().unwrap();
            rig.cluster.masters[3].restart_empty().unwrap();
        },
    )
    .await;
}

#[tokio::test]
async fn kill_9_of_three_masters_stops_grants_until_they_return() {
    let mut rig = Rig::start(2, &[]).await;
    let (work, stop) = rig.workload_until_stopped(CLIENTS, "r").await;
    sleep(Duration::from_secs(1)).await;
    for i in 0..3 {
        rig.cluster.masters[i].kill();
    }
    let killed = Instant::now();
    sleep(Duration::from_millis(2500)).await;
    let restarted = Instant::now();
    for i in 0..3 {
        rig.cluster.masters[i].restart_empty().unwrap();
    }
    // They are back once they answer (each restart waits for that, and
    // holds up the daemons' runtime meanwhile); quarantine then keeps them
    // out for MAX_TTL. The clients go on until a grant comes, or until the
    // liveness budget (measured by the warm-up, `Rig::liveness`) has passed.
    let healed = Instant::now();
    rig.until_granted_after("r", healed, rig.liveness()).await;
    stop.send(false).unwrap();
    work.await.unwrap();
    let report = rig.check("r", Some(healed));
    report.assert_safe();
    // No acquire sent after the kill was granted while the masters were down.
    let during = rig.history.ops().into_iter().filter(|op| {
        op.invoke > killed + Duration::from_millis(100)
            && op.complete.is_some_and(|c| c < restarted)
            && matches!(op.reply, support::history::Reply::Granted(_))
    });
    assert_eq!(during.count(), 0, "granted with a majority of masters dead");
}

#[tokio::test]
async fn sigstop_of_two_masters_beyond_the_ttl_is_safe() {
    let mut rig = Rig::start(2, &[]).await;
    scenario(
        &mut rig,
        async |rig| [1, 2].iter().for_each(|i| rig.cluster.masters[*i].pause()),
        async |rig| [1, 2].iter().for_each(|i| rig.cluster.masters[*i].resume()),
    )
    .await;
}

#[tokio::test]
async fn debug_sleep_beyond_the_ttl_is_safe() {
    let mut rig = Rig::start(2, &[]).await;
    scenario(
        &mut rig,
        async |rig| {
            let admin = rig.cluster.admin(2).await;
            tokio::spawn(async move {
                let cmd = fred::types::CustomCommand::new_static("DEBUG", fred::types::ClusterHash::FirstKey, false);
                let _: Result<fred::prelude::Value, _> =
                    fred::prelude::ClientLike::custom(&admin, cmd, vec!["SLEEP", "2.5"]).await;
            });
        },
        nothing,
    )
    .await;
}

#[tokio::test]
async fn delay_below_the_per_node_timeout_is_safe() {
    let mut rig = Rig::start(2, &[]).await;
    let delay = Mode::Delay {
        base: Duration::from_millis(20),
        jitter: Duration::from_millis(40),
    };
    scenario(
        &mut rig,
        async move |rig| (0..5).for_each(|n| rig.link(n, delay)),
        async |rig| rig.heal_links(),
    )
    .await;
}

#[tokio::test]
async fn reply_delay_beyond_the_ttl_is_safe() {
    let mut rig = Rig::start(2, &[]).await;
    let delay = Mode::Delay {
        base: TTL + Duration::from_millis(500),
        jitter: Duration::from_millis(200),
    };
    scenario(
        &mut rig,
        async move |rig| {
            rig.link(0, delay);
            rig.link(4, delay);
        },
        async |rig| rig.heal_links(),
    )
    .await;
}

#[tokio::test]
async fn lost_replies_are_safe() {
    let mut rig = Rig::start(2, &[]).await;
    scenario(
        &mut rig,
        async |rig| {
            rig.links(0, &[3, 4], Mode::DropReplies);
            rig.links(1, &[0], Mode::DropReplies);
        },
        async |rig| rig.heal_links(),
    )
    .await;
}

#[tokio::test]
async fn a_blackholed_minority_is_safe() {
    let mut rig = Rig::start(2, &[]).await;
    scenario(
        &mut rig,
        async |rig| {
            rig.link(1, Mode::Blackhole);
            rig.link(3, Mode::Blackhole);
        },
        async |rig| rig.heal_links(),
    )
    .await;
}

#[tokio::test]
async fn a_blackholed_majority_is_safe_and_recovers() {
    let mut rig = Rig::start(2, &[]).await;
    scenario(
        &mut rig,
        async |rig| (0..3).for_each(|n| rig.link(n, Mode::Blackhole)),
        async |rig| rig.heal_links(),
    )
    .await;
}

#[tokio::test]
async fn an_asymmetric_partition_is_safe() {
    // Daemon 0 sees A, B, C; daemon 1 sees C, D, E.
    let mut rig = Rig::start(2, &[]).await;
    scenario(
        &mut rig,
        async |rig| {
            rig.links(0, &[3, 4], Mode::Blackhole);
            rig.links(1, &[0, 1], Mode::Blackhole);
        },
        async |rig| rig.heal_links(),
    )
    .await;
}

#[tokio::test]
async fn masters_restarted_empty_with_quarantine_are_safe() {
    let mut rig = Rig::start(2, &[]).await;
    scenario(
        &mut rig,
        async |rig| {
            rig.cluster.masters[0].restart_empty().unwrap();
            sleep(Duration::from_millis(700)).await;
            rig.cluster.masters[1].restart_empty().unwrap();
        },
        nothing,
    )
    .await;
}

#[tokio::test]
async fn connection_resets_are_safe() {
    let mut rig = Rig::start(2, &[]).await;
    scenario(
        &mut rig,
        async |rig| {
            rig.link(2, Mode::Reset);
            rig.links(0, &[4], Mode::Reset);
        },
        async |rig| rig.heal_links(),
    )
    .await;
}

#[tokio::test]
async fn a_daemon_killed_with_kill_9_while_its_clients_hold_locks_is_safe() {
    let rig = Rig::start(1, &[]).await;
    let env = support::rig::rig_env(&rig.cluster, &rig.proxies[0], &[]);
    let mut doomed = support::rig::BinaryDaemon::start(env).await;
    let mut holder = rig.client_at(doomed.addr, "doomed-client").await;
    let work = rig.workload(CLIENTS, "r", Duration::from_secs(6)).await;
    // Its client takes the lock; the daemon dies under it.
    let held = holder
        .acquire("r", Duration::from_secs(3))
        .await
        .expect("the doomed daemon's client got the lock");
    holder.write_fenced(&held, "doomed");
    doomed.kill();
    let killed = Instant::now();
    holder.release("r", &held).await;
    work.await.unwrap();
    let report = rig.check("r", Some(killed));
    report.assert_safe();
}

#[tokio::test]
async fn a_client_that_vanishes_holding_or_waiting_is_safe() {
    let rig = Rig::start(2, &[]).await;
    let work = rig.workload(CLIENTS, "r", Duration::from_secs(6)).await;
    sleep(Duration::from_millis(500)).await;
    // One vanishes while holding (no release: the lock expires) ...
    let mut gone = rig.client(0, "vanished-holder").await;
    if let Some(held) = gone.acquire("r", Duration::from_secs(3)).await {
        gone.write_fenced(&held, "vanished");
    }
    drop(gone);
    let vanished = Instant::now();
    // ... and one while waiting (its request is cancelled mid-wait).
    let mut waiter = rig.client(1, "vanished-waiter").await;
    let _ = tokio::time::timeout(Duration::from_millis(300), waiter.acquire("r", Duration::from_secs(5))).await;
    drop(waiter);
    work.await.unwrap();
    rig.check("r", Some(vanished)).assert_safe();
}

/// A daemon whose URLs for `wrong` carry a wrong password (those masters
/// require one).
async fn daemon_with_wrong_passwords(rig: &Rig, wrong: &[usize]) -> support::Daemon {
    for i in wrong {
        rig.cluster.config_set(*i, "requirepass", "right").await;
    }
    let mut env = support::rig::rig_env(&rig.cluster, &rig.proxies[0], &[]);
    let urls: Vec<String> = rig.proxies[0]
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if wrong.contains(&i) {
                format!("redis://:wrong@{}", p.addr())
            } else {
                p.url()
            }
        })
        .collect();
    env.insert("REDLOCKD__REDIS__NODES".into(), urls.join(","));
    support::Daemon::start_with(env).await
}

#[tokio::test]
async fn a_wrong_redis_password_counts_as_a_node_failure_never_as_not_held() {
    let rig = Rig::start(1, &[]).await;
    let daemon = daemon_with_wrong_passwords(&rig, &[4]).await;
    let mut client = rig.client_at(daemon.addr, "wrong-password").await;
    for _ in 0..10 {
        let held = client
            .acquire("r", Duration::from_secs(2))
            .await
            .expect("four masters still grant");
        client.release("r", &held).await;
    }
    let report = rig.check("r", None);
    report.assert_safe();
    let releases = rig
        .history
        .ops()
        .into_iter()
        .filter(|op| matches!(op.kind, support::history::Kind::Release(_)));
    for op in releases {
        assert_eq!(
            op.reply,
            support::history::Reply::Released,
            "a release was reported as not held"
        );
    }
}

#[tokio::test]
async fn three_wrong_redis_passwords_make_the_cluster_unavailable_not_taken() {
    let rig = Rig::start(1, &[]).await;
    let daemon = daemon_with_wrong_passwords(&rig, &[2, 3, 4]).await;
    let mut client = daemon.client().await;
    let status = client.acquire(support::acquire_req("r", 1.0, 0.0)).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
}
