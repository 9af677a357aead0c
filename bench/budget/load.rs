//! The fixed loads of the budget check, shaped as workloads (a) and (b) of
//! docs/performance.md#method: fixed counts of cycles on fixed names (not a
//! duration), so that each run asks the daemon for exactly the same work.

use std::time::Duration;

use anyhow::{Context, bail};
use redlockd_client::Pipeline;
use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{AcquireRequest, ReleaseRequest};
use tonic::transport::Endpoint;

/// (a): one client, this many acquire + release cycles one after another.
pub const A_CYCLES: usize = 200;
/// (b): this many clients in closed loops on one shared `Pipeline` stream...
pub const B_CLIENTS: usize = 64;
/// ...each this many cycles, on names of its own.
pub const B_CYCLES_PER_CLIENT: usize = 8;

/// The lease's TTL: far longer than any cycle, even under callgrind.
const TTL: Duration = Duration::from_secs(60);

/// One of the two workloads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Workload {
    A,
    B,
}

impl Workload {
    pub const ALL: [Workload; 2] = [Workload::A, Workload::B];

    /// Its key in the budget file: `a` or `b`.
    pub fn key(self) -> &'static str {
        match self {
            Workload::A => "a",
            Workload::B => "b",
        }
    }

    /// Lock cycles in one pass.
    pub fn cycles(self) -> usize {
        match self {
            Workload::A => A_CYCLES,
            Workload::B => B_CLIENTS * B_CYCLES_PER_CLIENT,
        }
    }
}

/// One `Pipeline` stream to the daemon at `addr` (`127.0.0.1:port`).
pub async fn connect(addr: &str) -> anyhow::Result<Pipeline> {
    let channel = Endpoint::from_shared(format!("http://{addr}"))?
        .connect()
        .await
        .with_context(|| format!("connecting to redlockd at {addr}"))?;
    Ok(Pipeline::open(LockClient::new(channel)).await?)
}

/// Waits until the daemon grants a first lock (its masters verified), or
/// `limit` passes; a slow start under callgrind takes a while.
pub async fn first_grant(pipeline: &Pipeline, limit: Duration) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + limit;
    let mut last = String::from("no answer yet");
    while tokio::time::Instant::now() < deadline {
        match cycle(pipeline, "budget/first".into()).await {
            Ok(()) => return Ok(()),
            Err(e) => last = format!("{e:#}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    bail!("redlockd granted no lock within {limit:?}: {last}")
}

/// One pass of `workload`, always on the same names; (a) pauses `gap`
/// after each cycle.
pub async fn pass(pipeline: &Pipeline, workload: Workload, gap: Duration) -> anyhow::Result<()> {
    match workload {
        Workload::A => {
            for n in 0..A_CYCLES {
                cycle(pipeline, format!("budget/a/{n}")).await?;
                if !gap.is_zero() {
                    tokio::time::sleep(gap).await;
                }
            }
        }
        Workload::B => {
            let clients = (0..B_CLIENTS).map(|client| {
                let pipeline = pipeline.clone();
                tokio::spawn(async move {
                    for n in 0..B_CYCLES_PER_CLIENT {
                        cycle(&pipeline, format!("budget/b/{client}/{n}")).await?;
                    }
                    anyhow::Ok(())
                })
            });
            for outcome in futures::future::join_all(clients).await {
                outcome.context("a client of (b) panicked")??;
            }
        }
    }
    Ok(())
}

/// Acquire `name` (it must be free) and release it at once.
async fn cycle(pipeline: &Pipeline, name: String) -> anyhow::Result<()> {
    let request = AcquireRequest {
        resource: name.clone(),
        ttl: Some(redlockd_client::wire_duration(TTL)),
        ..AcquireRequest::default()
    };
    let reply = pipeline
        .acquire(request)
        .await
        .with_context(|| format!("acquire {name}"))?;
    let lease = match reply.lease {
        Some(lease) if reply.acquired => lease,
        _ => bail!("acquire {name}: not acquired ({reply:?})"),
    };
    let released = pipeline
        .release(ReleaseRequest {
            resource: name.clone(),
            value: lease.value,
        })
        .await
        .with_context(|| format!("release {name}"))?;
    if !released.released {
        bail!("release {name}: released = false");
    }
    Ok(())
}
