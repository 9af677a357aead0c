//! How the report writes numbers (docs/performance.md): counts with
//! thousands separators, latencies in µs, ms or s, ratios, megabytes, and
//! an error cut to one short line for a table cell. A leaf: it imports
//! nothing of the crate.

use std::time::Duration;

/// A mebibyte, in bytes.
pub(crate) const MB: f64 = 1024.0 * 1024.0;

pub(crate) fn secs(d: Option<Duration>) -> f64 {
    d.map_or(f64::NAN, |d| d.as_secs_f64())
}

/// ×0.35, ×4.4, ×18, ×32,348.
pub(crate) fn ratio(x: f64) -> String {
    if !x.is_finite() {
        "—".into()
    } else if x >= 100.0 {
        int(x)
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// 137 µs, 4.0 ms, 350 ms, 1.20 s.
pub(crate) fn lat(d: Option<Duration>) -> String {
    let Some(d) = d else { return "—".into() };
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 10_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else if us < 1_000_000.0 {
        format!("{:.0} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// 22,700.
pub(crate) fn int(x: f64) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    let digits = format!("{:.0}", x.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(crate) fn mb(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "—".into(), |b| format!("{:.1} MB", b as f64 / MB))
}

pub(crate) fn short(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").replace('|', "/");
    if line.chars().count() > 80 {
        format!("{}…", line.chars().take(80).collect::<String>())
    } else {
        line
    }
}
