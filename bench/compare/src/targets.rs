//! The targets of docs/performance.md, judged on one run's numbers (ratios
//! within the run), as a table under the report.

use std::fmt::Write as _;
use std::time::Duration;

use crate::format::{MB, int, lat, mb, ratio, secs};
use crate::{Results, Run, System, Workload};

/// The targets of docs/performance.md that this run's numbers can judge.
pub(crate) fn table(out: &mut String, results: &Results) {
    let get = |w, s| match results.runs.get(&(w, s)) {
        Some(Run::Done(o)) if o.ops > 0 => Some(o),
        _ => None,
    };
    let mut rows: Vec<(String, String, Option<bool>)> = Vec::new();
    let (ra, sa, ea) = (
        get(Workload::A, System::Redlockd),
        get(Workload::A, System::Rslock),
        get(Workload::A, System::Etcd),
    );
    if let (Some(r), Some(s)) = (ra, sa) {
        let (rp, sp) = (r.latency(0.5), s.latency(0.5));
        rows.push((
            "(a) acquire p50 ≤ 1.5 × rslock's".into(),
            format!("{} vs {} (×{})", lat(rp), lat(sp), ratio(secs(rp) / secs(sp))),
            Some(secs(rp) <= 1.5 * secs(sp)),
        ));
        if let Some(hop) = &results.hop {
            let hp = hop.quantile(0.5);
            rows.push((
                "(a) what bounds it: the gRPC hop alone (Health/Check, no master asked), p50".into(),
                format!(
                    "{} (×{} rslock's whole acquire; redlockd's acquire spends {} beyond it)",
                    lat(hp),
                    ratio(secs(hp) / secs(sp)),
                    lat(rp.zip(hp).map(|(r, h)| r.saturating_sub(h)))
                ),
                None,
            ));
        }
    }
    if let (Some(r), Some(e)) = (ra, ea) {
        rows.push((
            "(a) throughput ≥ 5 × etcd's".into(),
            format!(
                "{}/s vs {}/s (×{})",
                int(r.rate()),
                int(e.rate()),
                ratio(r.rate() / e.rate())
            ),
            Some(r.rate() >= 5.0 * e.rate()),
        ));
    }
    let (rb, sb) = (get(Workload::B, System::Redlockd), get(Workload::B, System::Rslock));
    if let (Some(r), Some(s)) = (rb, sb) {
        rows.push((
            "(b) throughput ≥ 1.5 × rslock's".into(),
            format!(
                "{}/s vs {}/s (×{})",
                int(r.rate()),
                int(s.rate()),
                ratio(r.rate() / s.rate())
            ),
            Some(r.rate() >= 1.5 * s.rate()),
        ));
    }
    if let Some(r) = rb {
        let p99 = r.latency(0.99);
        rows.push((
            "(b) acquire p99 ≤ 2 ms".into(),
            lat(p99),
            Some(p99.is_some_and(|d| d <= Duration::from_millis(2))),
        ));
    }
    let (rc, sc) = (get(Workload::C, System::Redlockd), get(Workload::C, System::Rslock));
    if let (Some(r), Some(s)) = (rc, sc) {
        let (rp, sp) = (r.latency(0.99), s.latency(0.99));
        rows.push((
            "(c) wait p99 ≤ rslock's / 10".into(),
            format!("{} vs {} (×{})", lat(rp), lat(sp), ratio(secs(rp) / secs(sp))),
            Some(secs(rp) * 10.0 <= secs(sp)),
        ));
        rows.push((
            "(c) hand-offs/s ≥ rslock's".into(),
            format!(
                "{}/s vs {}/s (×{})",
                int(r.rate()),
                int(s.rate()),
                ratio(r.rate() / s.rate())
            ),
            Some(r.rate() >= s.rate()),
        ));
    }
    if let Some(Ok(o)) = &results.sessions {
        rows.push((
            format!("(d) {} sessions with daemon RSS ≤ 50 MB", o.planned),
            format!("{} held, {} LOST, RSS {}", o.held, o.lost, mb(o.rss_held)),
            Some(o.held == o.planned && o.lost == 0 && o.rss_held.is_some_and(|b| (b as f64) <= 50.0 * MB)),
        ));
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nTargets (docs/performance.md; ratios within this run):\n\n| target | measured | |\n|---|---|---|"
    );
    for (target, measured, met) in rows {
        let verdict = match met {
            Some(true) => "met",
            Some(false) => "**missed**",
            None => "—",
        };
        let _ = writeln!(out, "| {target} | {measured} | {verdict} |");
    }
}
