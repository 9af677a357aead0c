//! What a lone lock cycle costs each master
//! (docs/performance.md#what-a-lock-cycle-costs-a-master): one gRPC client
//! takes and releases locks on distinct names one at a time, and each
//! master's own accounting (`INFO commandstats`, reset after a warm-up)
//! says what it ran per cycle. A measurement, run on demand by
//! `scripts/lock-costs` (ignored in the suite: its numbers are printed,
//! and it fails only when a cycle was not granted or a master did not
//! grant and delete every lock).

use std::collections::BTreeMap;
use std::time::Duration;

use fred::prelude::{ClientLike, Value};
use fred::types::{ClusterHash, CustomCommand};

use crate::support::{self, Cluster, Daemon};

/// Cycles measured per pass.
const CYCLES: usize = 2000;

/// One command's line of `INFO commandstats`: calls and µs in all.
fn commandstats(info: &str) -> BTreeMap<String, (f64, f64)> {
    let mut stats = BTreeMap::new();
    for line in info.lines() {
        let Some((name, fields)) = line.strip_prefix("cmdstat_").and_then(|l| l.split_once(':')) else {
            continue;
        };
        let field = |key: &str| {
            (fields.split(',').find_map(|f| f.strip_prefix(key)))
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        stats.insert(name.to_owned(), (field("calls="), field("usec=")));
    }
    stats
}

/// `cycles` acquire + release cycles of `names`, one at a time.
async fn cycles(
    client: &mut redlockd_client::proto::lock_client::LockClient<tonic::transport::Channel>,
    names: &[String],
) {
    for name in names {
        let lease = support::must_acquire(client, name, 10.0, 0.0).await;
        assert!(support::release(client, &lease).await, "{name} was not released");
    }
}

/// Resets every master's statistics.
async fn reset(masters: &[fred::prelude::Client]) {
    let config = CustomCommand::new_static("CONFIG", ClusterHash::FirstKey, false);
    for admin in masters {
        let _: Value = admin.custom(config.clone(), vec!["RESETSTAT"]).await.unwrap();
    }
}

/// Prints what each master ran per cycle, and returns the fewest grants
/// (`INCR`) or deletes (`DEL`) per cycle of any master.
async fn report(pass: &str, masters: &[fred::prelude::Client]) -> f64 {
    let n = CYCLES as f64;
    let mut fewest = f64::MAX;
    println!("\n{pass}: {CYCLES} lone acquire + release cycles, per cycle on each master");
    for (i, admin) in masters.iter().enumerate() {
        let info: String = admin.info(Some(fred::types::InfoKind::CommandStats)).await.unwrap();
        let stats = commandstats(&info);
        let scripts = ["evalsha", "eval"].iter().filter_map(|c| stats.get(*c));
        let (calls, usec) = scripts.fold((0.0, 0.0), |(c, u), (c2, u2)| (c + c2, u + u2));
        let per_cycle = |name: &str| stats.get(name).map_or(0.0, |(c, _)| c / n);
        fewest = fewest.min(per_cycle("incr")).min(per_cycle("del"));
        let inner: Vec<String> = (stats.iter())
            .filter(|(name, _)| !["evalsha", "eval", "config|resetstat", "info", "config|get"].contains(&name.as_str()))
            .map(|(name, (c, u))| format!("{name} {:.2} × {:.2} µs", c / n, u / c.max(1.0)))
            .collect();
        println!(
            "master {i}: {:.2} script calls × {:.1} µs = {:.1} µs of server time; inside: {}",
            calls / n,
            usec / calls.max(1.0),
            usec / n,
            inner.join(", ")
        );
    }
    fewest
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, run by scripts/lock-costs"]
async fn a_lone_lock_cycle_costs_each_master() {
    let cluster = Cluster::start(5);
    // One probe at the start, none while measuring.
    let env = support::env_with(&cluster, &[("REDLOCKD__SAFETY__CHECK_INTERVAL", "1m".into())]);
    let daemon = Daemon::start_with(env).await;
    daemon.until_usable(5).await;
    let mut client = daemon.client().await;
    let mut masters = Vec::new();
    for i in 0..5 {
        masters.push(cluster.admin(i).await);
    }
    let names = |pass: &str| (0..CYCLES).map(|i| format!("costs/{pass}/{i}")).collect::<Vec<_>>();
    cycles(&mut client, &names("warm")[..200]).await;
    tokio::time::sleep(Duration::from_millis(100)).await;

    // Distinct names, most in buckets no lock used yet (2,000 of 16,384).
    let fresh = names("fresh");
    reset(&masters).await;
    cycles(&mut client, &fresh).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let first = report("fresh buckets", &masters).await;

    // The same names again: every bucket used, every key free.
    reset(&masters).await;
    cycles(&mut client, &fresh).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let second = report("used buckets", &masters).await;

    // Every master granted every lock and deleted it again (the round goes
    // to all; a release too, answered at quorum or not). Script calls may
    // be fewer than two per cycle: a release and the next lock can share a
    // batch.
    assert!(
        first >= 1.0 && second >= 1.0,
        "a master missed cycles: {first}, {second}"
    );
    daemon.stop().await;
}
