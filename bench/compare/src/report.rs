//! The report: Markdown tables (throughput and latency with ratios, CPU per
//! operation, the sessions of (d), the targets of docs/performance.md), and the versions
//! and machine they were measured on.

use std::fmt::Write as _;

use crate::daemon::SessionOutcome;
use crate::drive::Outcome;
use crate::format::{int, lat, mb, ratio, secs, short};
use crate::measure::Role;
use crate::{Results, Run, System, Workload};

const SYSTEMS: [System; 15] = [
    System::Redlockd,
    System::RedlockdHttp1,
    System::RedlockdHttp2,
    System::RedlockdTraced,
    System::Rslock,
    System::Node,
    System::Go,
    System::Redisson,
    System::RedissonRedlock,
    System::Etcd,
    System::Zookeeper,
    System::RedlockdAof,
    System::RslockAof,
    System::RedlockdValkey,
    System::RslockValkey,
];

/// The whole report.
pub fn markdown(results: &Results) -> String {
    let mut out = String::new();
    let command = if results.args_line.is_empty() {
        "scripts/bench".to_owned()
    } else {
        format!("scripts/bench {}", results.args_line)
    };
    let _ = writeln!(out, "\n`{command}`\n");
    for (name, value) in &results.environment {
        let _ = writeln!(out, "- {name}: {value}");
    }
    throughput(&mut out, results);
    rounds(&mut out, results);
    cpu(&mut out, results);
    if let Some(sessions) = &results.sessions {
        sessions_table(&mut out, sessions);
    }
    if let Some(elections) = &results.elections {
        crate::elections_report::table(&mut out, elections);
    }
    crate::targets::table(&mut out, results);
    out
}

fn throughput(out: &mut String, results: &Results) {
    let rows: Vec<Workload> = [Workload::A, Workload::B, Workload::C]
        .into_iter()
        .filter(|w| results.runs.keys().any(|(rw, _)| rw == w))
        .collect();
    if rows.is_empty() {
        return;
    }
    // The systems asked for: run, failed or skipped.
    let systems: Vec<System> = SYSTEMS
        .into_iter()
        .filter(|s| results.runs.keys().any(|(_, rs)| rs == s))
        .collect();
    // redlockd over rslock and over the fenced peers (etcd, ZooKeeper); on
    // other masters, over rslock on the same ones.
    let mut pairs = vec![
        (System::Redlockd, System::Rslock),
        (System::Redlockd, System::Etcd),
        (System::Redlockd, System::Zookeeper),
    ];
    pairs.extend((crate::masters::RATIOS.into_iter()).filter(|(r, o)| systems.contains(r) && systems.contains(o)));
    let _ = writeln!(
        out,
        "\n| workload | {} | {} |\n|---|{}",
        systems.iter().map(|s| s.label()).collect::<Vec<_>>().join(" | "),
        pairs
            .iter()
            .map(|(r, o)| format!("{} / {}", r.key(), o.key()))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(systems.len() + pairs.len())
    );
    for w in rows {
        let mut cells = vec![workload_label(w, results.clients)];
        for &s in &systems {
            cells.push(match results.runs.get(&(w, s)) {
                Some(Run::Done(o)) => cell(o),
                Some(Run::Failed(e)) => format!("failed: {}", short(e)),
                Some(Run::Skipped(why)) => format!("skipped: {}", short(why)),
                None => "—".into(),
            });
        }
        cells.extend(pairs.iter().map(|&(r, o)| ratio_cell(results, w, r, o)));
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    let _ = writeln!(
        out,
        "\nEach cell: lock cycles per second (acquire + release; for (c) hand-offs per second), then the \
         acquire latency p50 · p99 · p99.9 (for (c) the wait, from asking to holding). Ratios are \
         redlockd's value over the other's (ops: higher is better; latency: lower is better)."
    );
}

/// Every round's rates, with redlockd's ratio to rslock in each round and
/// the spread of those ratios (`--rounds`).
fn rounds(out: &mut String, results: &Results) {
    if results.rounds.is_empty() {
        return;
    }
    let systems: Vec<System> = SYSTEMS
        .into_iter()
        .filter(|s| results.rounds.keys().any(|(_, rs)| rs == s))
        .collect();
    let labels: Vec<&str> = systems.iter().map(|s| s.label()).collect();
    let _ = writeln!(
        out,
        "\nEvery round, in the order run (ops/s; the tables above show each system's median round):\n\n\
         | workload | round | {} | redlockd / rslock |\n|---|---|{}---|",
        labels.join(" | "),
        "---|".repeat(systems.len())
    );
    let workloads: Vec<Workload> = [Workload::A, Workload::B, Workload::C]
        .into_iter()
        .filter(|w| results.rounds.keys().any(|(rw, _)| rw == w))
        .collect();
    for w in workloads {
        let rate = |s: System, i: usize| results.rounds.get(&(w, s)).and_then(|r| r.get(i).copied().flatten());
        let n = systems
            .iter()
            .filter_map(|s| results.rounds.get(&(w, *s)).map(Vec::len))
            .max()
            .unwrap_or(0);
        let mut ratios = Vec::new();
        for i in 0..n {
            let mut cells = vec![workload_label(w, results.clients), (i + 1).to_string()];
            cells.extend(systems.iter().map(|s| rate(*s, i).map_or_else(|| "—".into(), int)));
            let r = rate(System::Redlockd, i)
                .zip(rate(System::Rslock, i))
                .map(|(x, y)| x / y);
            ratios.extend(r);
            cells.push(r.map_or_else(|| "—".into(), |r| format!("×{}", ratio(r))));
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        if !ratios.is_empty() {
            ratios.sort_by(f64::total_cmp);
            let median = if ratios.len() % 2 == 1 {
                ratios[ratios.len() / 2]
            } else {
                (ratios[ratios.len() / 2 - 1] + ratios[ratios.len() / 2]) / 2.0
            };
            let below = ratios.iter().filter(|r| **r < 1.0).count();
            let mut cells = vec![workload_label(w, results.clients), "all".into()];
            cells.extend(systems.iter().map(|_| String::new()));
            cells.push(format!(
                "median ×{} · ×{}–{} · {below} of {} below ×1.0",
                ratio(median),
                ratio(ratios[0]),
                ratio(ratios[ratios.len() - 1]),
                ratios.len()
            ));
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
    }
}

fn cpu(out: &mut String, results: &Results) {
    let done: Vec<(&(Workload, System), &Outcome)> = results
        .runs
        .iter()
        .filter_map(|(k, r)| match r {
            Run::Done(o) => Some((k, o)),
            _ => None,
        })
        .collect();
    if done.is_empty() {
        return;
    }
    let roles = [Role::Client, Role::Daemon, Role::Redis, Role::Etcd, Role::Zookeeper];
    let _ = writeln!(
        out,
        "\nCPU-seconds per 1000 operations, by process (client = the process driving the workload: this \
         benchmark, with rslock in it, or the peer's own process; redis: the masters it locks on, one for Redisson's \
         RLock); then these processes' CPU over wall time (cores busy, of {}), \
         and the CPU of every other process on the machine in the same window (background load):\n\n\
         | workload | system | {} | total | cores busy | other processes, cores |\n|---|---|{}---|---|---|",
        std::thread::available_parallelism().map_or(0, usize::from),
        roles.map(Role::label).join(" | "),
        "---|".repeat(roles.len())
    );
    for ((w, s), o) in done {
        let per_k = |cpu: f64| {
            if o.ops == 0 {
                "—".to_owned()
            } else {
                format!("{:.3}", cpu * 1000.0 / o.ops as f64)
            }
        };
        let cells: Vec<String> = roles
            .iter()
            .map(|r| o.cpu.get(*r).map_or_else(|| "—".to_owned(), per_k))
            .collect();
        let (busy, others) = if o.seconds > 0.0 {
            (o.cpu.total() / o.seconds, o.cpu.others() / o.seconds)
        } else {
            (0.0, 0.0)
        };
        let _ = writeln!(
            out,
            "| ({}) | {} | {} | {} | {busy:.2} | {others:.2} |",
            w.key(),
            s.label(),
            cells.join(" | "),
            per_k(o.cpu.total())
        );
    }
}

fn sessions_table(out: &mut String, sessions: &Result<SessionOutcome, String>) {
    let o = match sessions {
        Ok(o) => o,
        Err(e) => {
            let _ = writeln!(out, "\n(d) Hold sessions: failed: {}", short(e));
            return;
        }
    };
    let renewals = o.renewals_metric.unwrap_or(o.renewals_seen as f64);
    let per_s = |cpu: Option<f64>| cpu.map_or_else(|| "—".to_owned(), |c| format!("{:.2}", c / o.seconds));
    let daemon_cpu = o.cpu.get(Role::Daemon);
    let per_k = daemon_cpu
        .filter(|_| renewals > 0.0)
        .map_or_else(|| "—".to_owned(), |c| format!("{:.3}", c * 1000.0 / renewals));
    let _ = writeln!(
        out,
        "\n(d) redlockd, freshly started, with {planned} open `Hold` sessions (TTL {ttl:?}: each renewed \
         about every {third:?}):\n\n\
         | sessions held | opened in | daemon RSS: idle → held (peak) | renewals/s | LOST | redlockd CPU | \
         redis ×5 CPU | client CPU | redlockd CPU-s per 1000 renewals | other processes |\n\
         |---|---|---|---|---|---|---|---|---|---|",
        planned = o.planned,
        ttl = o.ttl,
        third = o.ttl / 3,
    );
    let _ = writeln!(
        out,
        "| {held} of {planned}{failed} | {open:.1} s{retried} | {before} → **{held_rss}** ({peak}) | {rate} | {lost} | \
         {d} cores | {r} cores | {c} cores | {per_k} | {others} cores |",
        held = o.held,
        planned = o.planned,
        failed = if o.failed_to_open > 0 {
            format!(
                " ({} failed: {})",
                o.failed_to_open,
                short(o.first_error.as_deref().unwrap_or(""))
            )
        } else {
            String::new()
        },
        retried = if o.open_retries > 0 {
            format!(" ({} starts refused and retried)", o.open_retries)
        } else {
            String::new()
        },
        open = o.open_seconds,
        before = mb(o.rss_before),
        held_rss = mb(o.rss_held),
        peak = mb(o.rss_peak),
        rate = int(renewals / o.seconds),
        lost = if o.lost > 0 {
            format!("**{}** ({} in the window)", o.lost, o.lost_in_window)
        } else {
            "0".into()
        },
        d = per_s(daemon_cpu),
        r = per_s(o.cpu.get(Role::Redis)),
        c = per_s(o.cpu.get(Role::Client)),
        others = per_s(Some(o.cpu.others())),
    );
    if let Some(why) = &o.lost_reason {
        let _ = writeln!(out, "\nThe first session lost: {}", short(why));
    }
}

fn workload_label(w: Workload, clients: usize) -> String {
    match w {
        Workload::A => "(a) 1 client, acquire + release, distinct names".into(),
        Workload::B => format!("(b) {clients} clients, distinct names"),
        Workload::C => format!("(c) {clients} clients on one name, wait until held, release at once"),
        Workload::D => "(d) Hold sessions".into(),
        Workload::E => "(e) leader failover".into(),
        Workload::F => "(f) observe fan-out".into(),
    }
}

fn cell(o: &Outcome) -> String {
    let mut cell = format!(
        "**{}/s**<br>{} · {} · {}",
        int(o.rate()),
        lat(o.latency(0.5)),
        lat(o.latency(0.99)),
        lat(o.latency(0.999))
    );
    if o.errors > 0 {
        let _ = write!(cell, "<br>{} errors", o.errors);
    }
    if o.not_acquired > 0 {
        let _ = write!(cell, "<br>{} not acquired", o.not_acquired);
    }
    cell
}

fn ratio_cell(results: &Results, w: Workload, system: System, other: System) -> String {
    let (Some(Run::Done(r)), Some(Run::Done(o))) = (results.runs.get(&(w, system)), results.runs.get(&(w, other)))
    else {
        return "—".into();
    };
    if r.ops == 0 || o.ops == 0 {
        return "—".into();
    }
    let x = |q| secs(r.latency(q)) / secs(o.latency(q));
    format!(
        "ops ×{}<br>p50 ×{} · p99 ×{} · p99.9 ×{}",
        ratio(r.rate() / o.rate()),
        ratio(x(0.5)),
        ratio(x(0.99)),
        ratio(x(0.999))
    )
}

/// A line for the progress log.
pub fn one_line(o: &Outcome) -> String {
    format!(
        "{}/s, p50 {}, p99 {}, p99.9 {} ({} ops in {:.1} s, {} errors, {} not acquired; CPU {:.2} s, others {:.2} s)",
        int(o.rate()),
        lat(o.latency(0.5)),
        lat(o.latency(0.99)),
        lat(o.latency(0.999)),
        o.ops,
        o.seconds,
        o.errors,
        o.not_acquired,
        o.cpu.total(),
        o.cpu.others()
    )
}

/// A line for the progress log.
pub fn sessions_line(o: &SessionOutcome) -> String {
    format!(
        "{} of {} held (opened in {:.1} s), RSS {} → {}, renewals/s {} (seen {}), LOST {}, \
         daemon CPU {:.2} s in {:.1} s",
        o.held,
        o.planned,
        o.open_seconds,
        mb(o.rss_before),
        mb(o.rss_held),
        o.renewals_metric.map_or_else(|| "?".into(), |r| int(r / o.seconds)),
        int(o.renewals_seen as f64 / o.seconds),
        o.lost,
        o.cpu.get(Role::Daemon).unwrap_or(0.0),
        o.seconds
    )
}
