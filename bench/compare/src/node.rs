//! node-redlock: `node bench/node/bench.js` runs one workload on the same
//! masters and reports on stdout (JSON lines); its CPU is read here between
//! its "start" and "end" lines, like everyone else's.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, bail};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::drive::{Outcome, Timing};
use crate::measure::{CpuSnapshot, Role, Samples, Watched};

/// `node` on PATH and `dir/node_modules` installed (`npm ci`; scripts/bench does).
pub fn available(dir: &Path) -> Result<PathBuf, String> {
    let node = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("node")).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|p| p.is_file())
        .ok_or("node is not installed")?;
    if !dir.join("node_modules").join("redlock").is_dir() {
        return Err(format!("{}/node_modules is missing (npm ci there)", dir.display()));
    }
    Ok(node)
}

/// Runs workload `workload` ("a", "b" or "c") with `clients` loops.
pub async fn run(
    node: &Path,
    dir: &Path,
    urls: &[String],
    workload: &str,
    clients: usize,
    timing: Timing,
    others: &[Watched],
) -> anyhow::Result<Outcome> {
    let mut child = tokio::process::Command::new(node)
        .arg(dir.join("bench.js"))
        .args(["--urls", &urls.join(",")])
        .args(["--workload", workload])
        .args(["--clients", &clients.to_string()])
        .args(["--warmup", &timing.warmup.as_secs_f64().to_string()])
        .args(["--duration", &timing.duration.as_secs_f64().to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .context("starting node")?;
    let pid = child.id().context("node exited at once")?;
    let mut watched = others.to_vec();
    watched.push(Watched {
        role: Role::Client,
        pid,
    });
    let mut lines = BufReader::new(child.stdout.take().context("node's stdout")?).lines();
    let mut before = None;
    let mut outcome = Outcome::default();
    let mut result = None;
    while let Some(line) = lines.next_line().await? {
        let message: serde_json::Value =
            serde_json::from_str(&line).with_context(|| format!("bench.js printed {line:?}"))?;
        match message["event"].as_str() {
            Some("start") => before = Some(CpuSnapshot::take(&watched)),
            Some("end") => {
                let after = CpuSnapshot::take(&watched);
                outcome.cpu = before.take().context("\"end\" before \"start\"")?.until(&after);
            }
            Some("result") => result = Some(message),
            _ => {}
        }
    }
    let status = child.wait().await?;
    if !status.success() {
        bail!("bench.js exited with {status}");
    }
    let result = result.context("bench.js printed no result")?;
    let count = |key: &str| result[key].as_u64().unwrap_or(0);
    outcome.ops = count("ops");
    outcome.errors = count("errors");
    outcome.not_acquired = count("not_acquired");
    outcome.seconds = result["seconds"].as_f64().unwrap_or(0.0);
    let micros = result["latencies_us"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_u64())
                .map(|v| u32::try_from(v).unwrap_or(u32::MAX))
                .collect()
        })
        .unwrap_or_default();
    let mut samples = Samples::from_micros(micros);
    samples.sort();
    outcome.latencies = samples;
    Ok(outcome)
}
