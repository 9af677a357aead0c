//! A peer: a lock library of another language (node-redlock, go-redsync,
//! Redisson), the real package, in a process of its own that runs one
//! workload on the same masters and reports on stdout (JSON lines:
//! "ready", "start" and "end" around the measured window, then "result");
//! its CPU is read here between "start" and "end", like everyone else's.
//! [`crate::peers`] finds each one; bench/node/bench.js is the reference
//! of the protocol.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;

use anyhow::{Context, bail};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::drive::{Outcome, Timing};
use crate::measure::{CpuSnapshot, Role, Samples, Watched};

/// How to start one peer, and what it is.
pub struct Peer {
    /// What the log and errors call it ("bench.js").
    pub name: &'static str,
    pub program: PathBuf,
    /// Arguments before the workload's (`--urls`, `--workload`, …).
    pub args: Vec<OsString>,
    /// How many of the masters it locks on (the first ones): their CPU counts.
    pub masters: usize,
    /// For the report's list of versions: what it is, and its versions.
    pub environment: (String, String),
}

impl Peer {
    /// Runs workload `workload` ("a", "b" or "c") with `clients` loops on
    /// `urls` (the first [`Peer::masters`] of them); `redis` are the
    /// masters' processes, in the same order.
    pub async fn run(
        &self,
        urls: &[String],
        workload: &str,
        clients: usize,
        timing: Timing,
        redis: &[Watched],
    ) -> anyhow::Result<Outcome> {
        let used = self.masters.min(urls.len());
        let mut child = tokio::process::Command::new(&self.program)
            .args(&self.args)
            .args(["--urls", &urls[..used].join(",")])
            .args(["--workload", workload])
            .args(["--clients", &clients.to_string()])
            .args(["--warmup", &timing.warmup.as_secs_f64().to_string()])
            .args(["--duration", &timing.duration.as_secs_f64().to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", self.program.display()))?;
        let name = self.name;
        let pid = child.id().with_context(|| format!("{name} exited at once"))?;
        let mut watched = redis[..used.min(redis.len())].to_vec();
        watched.push(Watched {
            role: Role::Client,
            pid,
        });
        let stdout = child.stdout.take().with_context(|| format!("{name}'s stdout"))?;
        let mut lines = BufReader::new(stdout).lines();
        let mut before = None;
        let mut outcome = Outcome::default();
        let mut result = None;
        while let Some(line) = lines.next_line().await? {
            let message: serde_json::Value =
                serde_json::from_str(&line).with_context(|| format!("{name} printed {line:?}"))?;
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
            bail!("{name} exited with {status}");
        }
        let result = result.with_context(|| format!("{name} printed no result"))?;
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
}
