//! Soak mode: random faults on random masters for `REDLOCKD_CHAOS_SECS`
//! seconds (10 by default, which CI runs), two daemons and six clients
//! contending, then the checker over the whole history. Prints one summary
//! line: operations, grants, faults injected by kind, violations by kind.
//!
//! `REDLOCKD_CHAOS_SECS=600 cargo test --test it soak -- --nocapture`

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use support::proxy::Mode;
use support::rig::{Rig, TTL};
use tokio::time::{Instant, sleep};

/// What is wrong with a master right now.
#[derive(Clone, Copy, Debug)]
enum Fault {
    Killed,
    Stopped,
    Link(Mode),
}

async fn inject(rig: &mut Rig, node: usize, fault: Fault) {
    match fault {
        Fault::Killed => rig.cluster.masters[node].kill(),
        Fault::Stopped => rig.cluster.masters[node].pause(),
        Fault::Link(mode) => {
            // Sometimes for one daemon only: an asymmetric partition.
            if fastrand::bool() {
                rig.links(fastrand::usize(..rig.daemons.len()), &[node], mode);
            } else {
                rig.link(node, mode);
            }
        }
    }
}

async fn heal(rig: &mut Rig, node: usize, fault: Fault) {
    match fault {
        // Back without its data: quarantine must keep it out.
        Fault::Killed => rig.cluster.masters[node].restart_empty().unwrap(),
        Fault::Stopped => rig.cluster.masters[node].resume(),
        Fault::Link(_) => rig.link(node, Mode::Pass),
    }
}

fn random_fault() -> (&'static str, Fault) {
    let delay = |ms: u64| Mode::Delay {
        base: Duration::from_millis(ms),
        jitter: Duration::from_millis(ms / 2),
    };
    match fastrand::usize(..7) {
        0 => ("kill-9", Fault::Killed),
        1 => ("sigstop", Fault::Stopped),
        2 => ("delay-short", Fault::Link(delay(30))),
        3 => ("delay-beyond-ttl", Fault::Link(delay(TTL.as_millis() as u64 + 300))),
        4 => ("drop-replies", Fault::Link(Mode::DropReplies)),
        5 => ("blackhole", Fault::Link(Mode::Blackhole)),
        _ => ("reset", Fault::Link(Mode::Reset)),
    }
}

#[tokio::test]
async fn chaos_soak_stays_safe_and_recovers() {
    let secs: u64 = std::env::var("REDLOCKD_CHAOS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let seed = fastrand::u64(..);
    fastrand::seed(seed);
    let mut rig = Rig::start(2, &[]).await;
    let run_for = Duration::from_secs(secs);
    let work = rig.workload(6, "r", run_for + Duration::from_secs(6)).await;
    let mut injected: BTreeMap<&str, usize> = BTreeMap::new();
    let mut faulty: BTreeMap<usize, Fault> = BTreeMap::new();
    let end = Instant::now() + run_for;
    while Instant::now() < end {
        sleep(Duration::from_millis(fastrand::u64(200..1200))).await;
        // At most two masters at fault at once, so grants keep happening.
        if faulty.len() >= 2 || (!faulty.is_empty() && fastrand::bool()) {
            let node = *faulty.keys().nth(fastrand::usize(..faulty.len())).unwrap();
            let fault = faulty.remove(&node).unwrap();
            heal(&mut rig, node, fault).await;
        } else {
            let node = fastrand::usize(..5);
            if faulty.contains_key(&node) {
                continue;
            }
            let (name, fault) = random_fault();
            inject(&mut rig, node, fault).await;
            faulty.insert(node, fault);
            *injected.entry(name).or_default() += 1;
        }
    }
    for (node, fault) in std::mem::take(&mut faulty) {
        heal(&mut rig, node, fault).await;
    }
    rig.heal_links();
    let healed = Instant::now();
    work.await.unwrap();
    let report = rig.check("r", Some(healed));
    println!(
        "chaos summary: {secs} s, seed {seed}, faults {injected:?}; {}",
        report.stats
    );
    report.assert_safe();
}
