//! Workloads (e) and (f), the elections (docs/performance.md#elections):
//! leader failover and observe fan-out, one procedure for redlockd's
//! `redlockd.v1.Election`, etcd's `v3electionpb.Election` and Curator's
//! `LeaderLatch` on ZooKeeper. Each system's candidates and observers are in
//! `elections_daemon.rs`, `elections_etcd.rs` and `elections_zookeeper.rs`,
//! what a candidate is in `candidate.rs`, the plan, the
//! `Electorate` they offer and what was found in `elections_types.rs`, the
//! table in `elections_report.rs`; this file kills, times and counts.

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::candidate::{Candidate, Elected};
use crate::daemon::Daemon;
use crate::elections_daemon::DaemonElection;
use crate::elections_etcd::EtcdElection;
use crate::elections_types::{ElectionPlan, ElectionResults, Electorate, Failovers, FanOut};
use crate::elections_zookeeper::ZookeeperElection;
use crate::etcd::Etcd;
use crate::measure::{CpuSnapshot, Samples, Watched};
use crate::peer::Peer;
use crate::zookeeper::ZooKeeper;
use crate::{System, Workload, say};

/// How long the first candidate, or the observers' first states, may take.
const START_LIMIT: Duration = Duration::from_secs(30);
/// How long new candidates get to join the queue before the first kill.
const SETTLE: Duration = Duration::from_millis(500);
/// The shortest a leader leads before it is killed (a random share of a
/// keep-alive period, TTL/3, is added: the kill falls anywhere between two
/// extensions or keep-alives, as a real crash does).
const MIN_HOLD: Duration = Duration::from_millis(100);
/// The daemon's count of leaderships ended without a resignation.
const ENDED_UNASKED: &str = "redlockd_elections_total{outcome=\"lost\"}";
/// Between two proclaims of (f).
const PAUSE: Duration = Duration::from_millis(100);
/// How long every observer has to be told of a proclaimed value.
const TOLD_LIMIT: Duration = Duration::from_secs(10);

/// (e): the leader killed, `plan.failovers` times; the time until one of
/// the waiting candidates is told it leads.
pub async fn failovers<E: Electorate>(side: &E, plan: &ElectionPlan) -> anyhow::Result<Failovers> {
    let mut leader = side.candidate(0);
    let first = elected(&mut leader, START_LIMIT).await.context("the first candidate")?;
    let mut waiting: Vec<Candidate> = (1..plan.candidates).map(|id| side.candidate(id)).collect();
    let mut next_id = plan.candidates;
    tokio::time::sleep(SETTLE).await;
    let mut outcome = Failovers {
        planned: plan.failovers,
        samples: Samples::default(),
        terms_rising: true,
        first_error: None,
        unasked: None,
    };
    let mut term = first.term;
    let limit = plan.ttl * 2 + Duration::from_secs(10);
    let random = std::collections::hash_map::RandomState::new();
    for round in 0..plan.failovers {
        let share = random.hash_one(round) as f64 / u64::MAX as f64;
        tokio::time::sleep(MIN_HOLD + (plan.ttl / 3).mul_f64(share)).await;
        if let Some(early) = waiting.iter_mut().find_map(|c| c.elected.try_recv().ok()) {
            let what = early.map_or_else(|e| format!("{e:#}"), |_| "elected while another led".into());
            outcome.first_error = Some(format!("failover {}: a waiting candidate: {what}", round + 1));
            break;
        }
        let killed = Instant::now();
        drop(leader);
        let next = futures::future::select_all(waiting.iter_mut().map(|c| &mut c.elected));
        let (won, index) = match tokio::time::timeout(limit, next).await {
            Ok((won, index, _)) => (won, index),
            Err(_) => {
                outcome.first_error = Some(format!("failover {}: nobody elected within {limit:?}", round + 1));
                waiting.clear();
                return Ok(finish(outcome));
            }
        };
        match won.map_err(|_| anyhow!("its task ended")).and_then(|r| r) {
            Ok(elected) => {
                outcome.samples.push(elected.at.saturating_duration_since(killed));
                outcome.terms_rising &= elected.term > term;
                term = elected.term;
            }
            Err(e) => {
                outcome.first_error = Some(format!("failover {}: the next candidate: {e:#}", round + 1));
                waiting.clear();
                return Ok(finish(outcome));
            }
        }
        leader = waiting.remove(index);
        waiting.push(side.candidate(next_id));
        next_id += 1;
        if (round + 1) % 10 == 0 {
            let mut so_far = outcome.samples.clone();
            so_far.sort();
            say(format!(
                "    {} failovers, p50 so far {:?}",
                round + 1,
                so_far.quantile(0.5).unwrap_or_default()
            ));
        }
    }
    Ok(finish(outcome))
}

fn finish(mut outcome: Failovers) -> Failovers {
    outcome.samples.sort();
    outcome
}

async fn elected(candidate: &mut Candidate, limit: Duration) -> anyhow::Result<Elected> {
    tokio::time::timeout(limit, &mut candidate.elected)
        .await
        .map_err(|_| anyhow!("not elected within {limit:?}"))?
        .map_err(|_| anyhow!("its task ended"))?
}

/// (f): `plan.observers` observers on one election whose leader proclaims
/// `plan.proclaims` values one after another; the time from each send
/// until each observer, and the last, is told.
pub async fn fan_out<E: Electorate>(side: &E, plan: &ElectionPlan, watched: &[Watched]) -> anyhow::Result<FanOut> {
    let mut leader = side.candidate(0);
    elected(&mut leader, START_LIMIT).await.context("the leader")?;
    let opening = Instant::now();
    let streams = side.observers(plan.observers, plan.observer_connections).await?;
    let n = streams.len();
    let (tx, mut rx) = mpsc::unbounded_channel::<(usize, anyhow::Result<Vec<u8>>, Instant)>();
    let readers: Vec<JoinHandle<()>> = (streams.into_iter().enumerate())
        .map(|(i, mut values)| {
            let tx = tx.clone();
            tokio::spawn(async move {
                while let Some(value) = values.next().await {
                    let failed = value.is_err();
                    if tx.send((i, value, Instant::now())).is_err() || failed {
                        return;
                    }
                }
                let _ = tx.send((i, Err(anyhow!("the stream ended")), Instant::now()));
            })
        })
        .collect();
    drop(tx);
    let mut outcome = FanOut {
        observers: n,
        connections: plan.observer_connections,
        planned: plan.proclaims,
        opened_in: 0.0,
        last: Samples::default(),
        each: Samples::default(),
        missed: 0,
        first_error: None,
        cpu: CpuSnapshot::default(),
        seconds: 0.0,
    };
    let leaders_value = b"candidate-0".to_vec();
    let deadline = opening + START_LIMIT;
    let mut first_states = Samples::default();
    let (told, _) = told_all(
        &mut rx,
        n,
        &leaders_value,
        (opening, deadline),
        &mut first_states,
        &mut outcome.first_error,
    )
    .await;
    if told.is_none() {
        return Err(anyhow!(
            "not every observer was told the leader's value within {START_LIMIT:?}: {}",
            outcome.first_error.take().unwrap_or_default()
        ));
    }
    outcome.opened_in = opening.elapsed().as_secs_f64();
    say(format!(
        "    {n} observers told the leader in {:.1} s",
        outcome.opened_in
    ));
    let before = CpuSnapshot::take(watched);
    let started = Instant::now();
    for round in 0..plan.proclaims {
        let value = format!("value-{round}").into_bytes();
        let sent = Instant::now();
        leader.proclaim.send(value.clone()).context("the leader's task ended")?;
        let window = (sent, sent + TOLD_LIMIT);
        let (last, missed) = told_all(&mut rx, n, &value, window, &mut outcome.each, &mut outcome.first_error).await;
        if let Some(last) = last {
            outcome.last.push(last);
        }
        outcome.missed += missed;
        tokio::time::sleep(PAUSE).await;
    }
    outcome.seconds = started.elapsed().as_secs_f64();
    outcome.cpu = before.until(&CpuSnapshot::take(watched));
    for reader in readers {
        reader.abort();
    }
    outcome.last.sort();
    outcome.each.sort();
    Ok(outcome)
}

/// Reads what the observers are told until each of the `n` has been told
/// `value`; each one's time since `sent` goes to `each`. Returns the last
/// one's (`None` when `deadline` came first) and how many were not told.
async fn told_all(
    rx: &mut mpsc::UnboundedReceiver<(usize, anyhow::Result<Vec<u8>>, Instant)>,
    n: usize,
    value: &[u8],
    (sent, deadline): (Instant, Instant),
    each: &mut Samples,
    first_error: &mut Option<String>,
) -> (Option<Duration>, usize) {
    let mut told = vec![false; n];
    let (mut count, mut last) = (0, Duration::ZERO);
    while count < n {
        match tokio::time::timeout_at(deadline.into(), rx.recv()).await {
            Ok(Some((i, Ok(got), at))) if got == value && !told[i] => {
                told[i] = true;
                count += 1;
                let took = at.saturating_duration_since(sent);
                each.push(took);
                last = last.max(took);
            }
            Ok(Some((i, Err(e), _))) => {
                first_error.get_or_insert_with(|| format!("observer {i}: {e:#}"));
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    ((count == n).then_some(last), n - count)
}

/// The servers (e) and (f) run on, and the processes whose CPU counts.
pub struct Servers<'a> {
    pub daemon: Option<(&'a Daemon, Vec<Watched>)>,
    /// etcd, or why it is not there.
    pub etcd: Option<Result<(&'a Etcd, Vec<Watched>), String>>,
    /// ZooKeeper and the JVM of Curator's recipes, or why they are not there.
    pub zookeeper: Option<Result<ZookeeperServer<'a>, String>>,
}

/// ZooKeeper, how to start a JVM of Curator's recipes, and the processes
/// whose CPU counts.
pub type ZookeeperServer<'a> = (&'a ZooKeeper, Arc<Peer>, Vec<Watched>);

/// Runs `workloads` ((e), (f)) on each server there is, redlockd first.
pub async fn run(workloads: &[Workload], plan: ElectionPlan, servers: Servers<'_>) -> ElectionResults {
    let lease_ttl = i64::try_from(plan.ttl.as_secs_f64().ceil() as u64)
        .unwrap_or(i64::MAX)
        .max(1);
    let mut results = ElectionResults {
        plan: plan.clone(),
        lease_ttl,
        failovers: BTreeMap::new(),
        fan_outs: BTreeMap::new(),
    };
    let pid = std::process::id();
    for &workload in workloads {
        if let Some((daemon, watched)) = &servers.daemon {
            let side = DaemonElection {
                addr: daemon.addr.clone(),
                election: format!("bench-{}-{pid}", workload.key()),
                ttl: plan.ttl,
            };
            say(format!("({}) redlockd", workload.key()));
            let ended_unasked = || daemon.metric(ENDED_UNASKED);
            let before = ended_unasked();
            results.record(workload, System::Redlockd, &side, &plan, watched).await;
            if let (Workload::E, Some(Ok(o))) = (workload, results.failovers.get_mut(&System::Redlockd)) {
                o.unasked = ended_unasked().zip(before).map(|(after, before)| after - before);
                if let Some(n) = o.unasked {
                    say(format!("    the daemon saw {n} leaderships end unasked"));
                }
            }
        }
        match &servers.etcd {
            Some(Ok((etcd, watched))) => {
                let side = EtcdElection {
                    endpoint: etcd.endpoint.clone(),
                    election: format!("bench-{}-{pid}", workload.key()),
                    lease_ttl,
                };
                say(format!(
                    "({}) etcd election API, lease TTL {lease_ttl} s",
                    workload.key()
                ));
                results.record(workload, System::Etcd, &side, &plan, watched).await;
            }
            Some(Err(why)) => results.skip(workload, System::Etcd, why),
            None => {}
        }
        match &servers.zookeeper {
            Some(Ok((zookeeper, java, watched))) => {
                let side = ZookeeperElection {
                    connect: zookeeper.connect.clone(),
                    java: java.clone(),
                    election: format!("/bench-{}-{pid}", workload.key()),
                    session: plan.ttl,
                };
                say(format!(
                    "({}) ZooKeeper, Curator's LeaderLatch, session timeout {:?}",
                    workload.key(),
                    plan.ttl
                ));
                results.record(workload, System::Zookeeper, &side, &plan, watched).await;
            }
            Some(Err(why)) => results.skip(workload, System::Zookeeper, why),
            None => {}
        }
    }
    results
}

impl ElectionResults {
    async fn record<E: Electorate>(
        &mut self,
        workload: Workload,
        system: System,
        side: &E,
        plan: &ElectionPlan,
        watched: &[Watched],
    ) {
        if workload == Workload::E {
            let outcome = failovers(side, plan).await.map_err(|e| format!("{e:#}"));
            match &outcome {
                Ok(o) => say(format!("    {}", crate::elections_report::failovers_line(o))),
                Err(e) => say(format!("    failed: {e}")),
            }
            self.failovers.insert(system, outcome);
        } else {
            let outcome = fan_out(side, plan, watched).await.map_err(|e| format!("{e:#}"));
            match &outcome {
                Ok(o) => say(format!("    {}", crate::elections_report::fan_out_line(o))),
                Err(e) => say(format!("    failed: {e}")),
            }
            self.fan_outs.insert(system, outcome);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    fn skip(&mut self, workload: Workload, system: System, why: &str) {
        let why = why.to_owned();
        if workload == Workload::E {
            self.failovers.insert(system, Err(why));
        } else {
            self.fan_outs.insert(system, Err(why));
        }
    }
}
