//! The report's table of (e) and (f) (docs/performance.md#elections):
//! redlockd's elections beside etcd's and ZooKeeper's (Curator), and their
//! progress lines.

use std::fmt::Write as _;

use crate::System;
use crate::elections_types::{ElectionResults, Failovers, FanOut};
use crate::format::{int, lat, ratio, secs, short};
use crate::measure::{Role, Samples};

/// A row of (f): its name, its samples, the quantiles shown.
type Row = (String, fn(&FanOut) -> &Samples, &'static [f64]);

/// The elections' table, with what each row measures.
pub fn table(out: &mut String, results: &ElectionResults) {
    let plan = &results.plan;
    let systems: Vec<System> = [System::Redlockd, System::Etcd, System::Zookeeper]
        .into_iter()
        .filter(|s| results.failovers.contains_key(s) || results.fan_outs.contains_key(s))
        .collect();
    if systems.is_empty() {
        return;
    }
    let label = |s: System| match s {
        System::Etcd => "etcd election API",
        System::Zookeeper => "ZooKeeper (Curator LeaderLatch)",
        other => other.label(),
    };
    // A ratio column for each system beside redlockd.
    let others: Vec<System> = if systems.contains(&System::Redlockd) {
        systems.iter().copied().filter(|&s| s != System::Redlockd).collect()
    } else {
        Vec::new()
    };
    let short_label = |s: System| if s == System::Zookeeper { "ZooKeeper" } else { s.key() };
    let _ = writeln!(
        out,
        "\nElections: {} candidates, each on a connection of its own (ZooKeeper: a JVM of its own); a term's TTL \
         {:?} (etcd: each candidate's lease, {} s, kept alive every TTL/3; ZooKeeper: each client's session \
         timeout):\n\n| workload | {} |{}\n|---|{}{}",
        plan.candidates,
        plan.ttl,
        results.lease_ttl,
        systems.iter().map(|s| label(*s)).collect::<Vec<_>>().join(" | "),
        others
            .iter()
            .map(|s| format!(" redlockd / {} |", short_label(*s)))
            .collect::<String>(),
        "---|".repeat(systems.len()),
        "---|".repeat(others.len()),
    );
    if !results.failovers.is_empty() {
        let mut cells = vec![format!(
            "(e) failover: the leader's client killed → the next candidate told it leads ({} failovers)",
            plan.failovers
        )];
        let got = |s| match results.failovers.get(&s) {
            Some(Ok(o)) if o.samples.len() > 0 => Some(&o.samples),
            _ => None,
        };
        for &s in &systems {
            cells.push(match results.failovers.get(&s) {
                Some(Ok(o)) => failovers_cell(o),
                Some(Err(e)) => format!("failed: {}", short(e)),
                None => "—".into(),
            });
        }
        for &s in &others {
            cells.push(ratios(got(System::Redlockd), got(s), &[0.5, 0.99]));
        }
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    if !results.fan_outs.is_empty() {
        let rows: [Row; 2] = [
            (
                format!(
                    "(f) a proclaimed value → the last of {} observers told ({} proclaims)",
                    int(plan.observers as f64),
                    plan.proclaims
                ),
                |o| &o.last,
                &[0.5, 0.99],
            ),
            (
                format!(
                    "(f) a proclaimed value → each observer told ({} observers)",
                    plan.observers
                ),
                |o| &o.each,
                &[0.5, 0.99, 0.999],
            ),
        ];
        for (i, (name, samples, quantiles)) in rows.into_iter().enumerate() {
            let got = |s| match results.fan_outs.get(&s) {
                Some(Ok(o)) if samples(o).len() > 0 => Some(samples(o)),
                _ => None,
            };
            let mut cells = vec![name];
            for &s in &systems {
                cells.push(match results.fan_outs.get(&s) {
                    Some(Ok(o)) => fan_out_cell(o, samples(o), quantiles, i == 0),
                    Some(Err(e)) => format!("failed: {}", short(e)),
                    None => "—".into(),
                });
            }
            for &s in &others {
                cells.push(ratios(got(System::Redlockd), got(s), quantiles));
            }
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
    }
    let _ = writeln!(
        out,
        "\n(e): each cell p50, then p99 · the longest (redlockd: how many leaderships the daemon saw end without a \
         resignation, `redlockd_elections_total{{outcome=\"lost\"}}`: each kill and the last leader's), from the drop (the candidate's socket shut down, its \
         task gone: no word to the server; ZooKeeper: the candidate's JVM killed with SIGKILL) until the next \
         candidate's ELECTED (etcd: its `Campaign` call returns; ZooKeeper: `LeaderLatchListener.isLeader` \
         fires in its JVM); the leader is killed a random share of TTL/3 after it was elected. redlockd \
         resigns for a client whose connection ended (lock_delay 0); etcd waits out the killed candidate's \
         lease, ZooKeeper its session. (f): the leader proclaims on its own connection (redlockd: on its \
         `Campaign` stream; etcd: `Proclaim`; ZooKeeper: `setData` on an ephemeral znode of the leader's), \
         one value after another, once every observer was told the last; the time from the send until an \
         observer's `Observe` stream (ZooKeeper: its `CuratorCache`'s listener, in one JVM) says the new value; \
         'the last' is per proclaim. Server CPU: over the proclaims, of the daemon and its masters, of etcd, or \
         of ZooKeeper."
    );
}

fn failovers_cell(o: &Failovers) -> String {
    let s = &o.samples;
    let mut cell = format!(
        "**{}**<br>{} · {}",
        lat(s.quantile(0.5)),
        lat(s.quantile(0.99)),
        lat(s.quantile(1.0))
    );
    if s.len() < o.planned {
        let _ = write!(cell, "<br>{} of {} failovers", s.len(), o.planned);
    }
    if !o.terms_rising {
        cell.push_str("<br>**a term did not rise**");
    }
    if let Some(n) = o.unasked {
        let _ = write!(cell, "<br>{} ended unasked", int(n));
    }
    if let Some(e) = &o.first_error {
        let _ = write!(cell, "<br>{}", short(e));
    }
    cell
}

fn fan_out_cell(o: &FanOut, s: &Samples, quantiles: &[f64], with_cpu: bool) -> String {
    let rest: Vec<String> = quantiles[1..].iter().map(|q| lat(s.quantile(*q))).collect();
    let mut cell = format!(
        "**{}**<br>{} · {}",
        lat(s.quantile(quantiles[0])),
        rest.join(" · "),
        lat(s.quantile(1.0))
    );
    if with_cpu {
        if o.last.len() < o.planned {
            let _ = write!(cell, "<br>{} of {} proclaims told to all", o.last.len(), o.planned);
        }
        let cores = |role| o.cpu.get(role).map(|c| c / o.seconds.max(1e-9));
        let servers: Vec<String> = [Role::Daemon, Role::Redis, Role::Etcd, Role::Zookeeper]
            .into_iter()
            .filter_map(|r| cores(r).map(|c| format!("{} {c:.2}", r.label())))
            .collect();
        let _ = write!(cell, "<br>server CPU: {} cores", servers.join(" + "));
    } else if o.missed > 0 {
        let _ = write!(cell, "<br>{} not told within 10 s", o.missed);
    }
    if let Some(e) = &o.first_error {
        let _ = write!(cell, "<br>{}", short(e));
    }
    cell
}

fn ratios(r: Option<&Samples>, e: Option<&Samples>, quantiles: &[f64]) -> String {
    let (Some(r), Some(e)) = (r, e) else {
        return "—".into();
    };
    quantiles
        .iter()
        .map(|q| {
            let x = secs(r.quantile(*q)) / secs(e.quantile(*q));
            // A small ratio as a fraction: ×1/1,150, not ×0.00.
            let x = if x > 0.0 && x < 0.1 {
                format!("1/{}", int(1.0 / x))
            } else {
                ratio(x)
            };
            format!("p{} ×{x}", q * 100.0)
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// A line for the progress log.
pub fn failovers_line(o: &Failovers) -> String {
    format!(
        "{} of {} failovers: p50 {}, p99 {}, max {}{}{}",
        o.samples.len(),
        o.planned,
        lat(o.samples.quantile(0.5)),
        lat(o.samples.quantile(0.99)),
        lat(o.samples.quantile(1.0)),
        if o.terms_rising { "" } else { "; a term did not rise" },
        o.first_error.as_ref().map_or_else(String::new, |e| format!("; {e}"))
    )
}

/// A line for the progress log.
pub fn fan_out_line(o: &FanOut) -> String {
    let busy = o.cpu.total() / o.seconds.max(1e-9);
    format!(
        "{} observers on {} connections (all told the leader in {:.1} s); {} of {} proclaims told to all: \
         last told p50 {}, p99 {}; each p50 {}, p99 {}; {} not told; {} cores busy (with this process){}",
        o.observers,
        o.connections,
        o.opened_in,
        o.last.len(),
        o.planned,
        lat(o.last.quantile(0.5)),
        lat(o.last.quantile(0.99)),
        lat(o.each.quantile(0.5)),
        lat(o.each.quantile(0.99)),
        int(o.missed as f64),
        format_args!("{busy:.2}"),
        o.first_error.as_ref().map_or_else(String::new, |e| format!("; {e}"))
    )
}
