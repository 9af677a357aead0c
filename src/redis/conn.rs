//! One master's lock connection (docs/design.md#the-lock-on-one-master):
//! the fred client, the process proof of its script cache, how releases are
//! announced, and the one path every script call takes — by SHA, reloaded
//! on `NOSCRIPT`, timed for the observer. The lock kinds (`exclusive.rs`,
//! `shared.rs`, `permits.rs`, `set.rs`, `listing.rs`) and the batches
//! (`batch.rs`) call their scripts through it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use fred::prelude::{Client, ClientLike, LuaInterface, Value};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::proof::{Proof, Variants};
use super::scripts::Script;
use crate::redlock::node::NodeError;
use crate::redlock::observer::Observer;

/// The lock connection to one master (or one cluster position).
pub(super) struct Conn {
    pub(super) client: Client,
    /// A round's wait for this master (for `Timing`).
    pub(super) node_timeout: Duration,
    /// Where each request's latency and errors go, with this master's index.
    pub(super) observer: OnceLock<(Arc<dyn Observer>, usize)>,
    /// Whether ROUND and HAND_OFF may go by the script cache's proof.
    pub(super) proof: Arc<Proof>,
    /// Told when something should be looked at before the next tick (a
    /// cached script missing, a bucket found unverified).
    pub(super) probe_wanted: Arc<Notify>,
    /// Releases are announced by `SPUBLISH` (a cluster whose primaries all
    /// have sharded pub/sub, Redis 7 and later) rather than `PUBLISH`; the
    /// cluster probe decides.
    pub(super) sharded_publish: AtomicBool,
    /// Round-1 batches go one per cluster primary (ROUND by primary, whose
    /// flags line needs Redis 7 on every primary) rather than one per slot;
    /// the cluster probe decides (docs/design.md#cluster-positions).
    pub(super) by_primary: AtomicBool,
    /// Names this daemon in the waiting marks its refused attempts leave,
    /// so its own hand-offs can tell its waiters from other daemons'.
    pub(super) waiter_tag: Value,
    /// How long (ms) a lock refused by shared holders keeps new ones out.
    pub(super) writer_wait: Value,
}

impl Conn {
    /// Whether the position is a Redis Cluster.
    pub(super) fn clustered(&self) -> bool {
        self.client.is_clustered()
    }

    /// How releases are announced: `PUBLISH`, or `SPUBLISH` (sharded: only
    /// the shard of the lock's bucket carries it).
    pub(super) fn publish(&self) -> Value {
        Value::from_static_str(if self.sharded_publish.load(Ordering::Relaxed) {
            "SPUBLISH"
        } else {
            "PUBLISH"
        })
    }

    /// Starts timing one request to this master: its latency is recorded
    /// when `answered`, as a failure unless it says ok.
    pub(super) fn timing(&self) -> Timing<'_> {
        Timing {
            observer: self.observer.get(),
            started: Instant::now(),
            timeout: self.node_timeout,
            answered: false,
        }
    }

    /// Runs `script` with `keys` and `args`, timed as one request to this
    /// master.
    pub(super) async fn eval(&self, script: &Script, keys: Vec<&str>, args: Vec<Value>) -> Result<Value, NodeError> {
        let timing = self.timing();
        let answer = eval_script(&self.client, script, || (keys.clone(), args.clone())).await;
        timing.answered(answer.is_ok());
        answer
    }

    /// Runs script `which` of the cached variants while the script cache
    /// proves the process (docs/design.md#process-identity), else `script`
    /// with its `INFO` check. `NOSCRIPT` of a variant means "not the
    /// process this daemon verified": the proof is withdrawn, a probe
    /// asked for, and the call goes again with the `INFO` check.
    pub(super) async fn eval_proved<'a>(
        &self,
        which: fn(&Variants) -> &Script,
        script: &Script,
        call: impl Fn() -> (Vec<&'a str>, Vec<Value>),
    ) -> Result<Value, NodeError> {
        if let Some(variants) = self.proof.in_use() {
            match eval_if_loaded(&self.client, which(&variants), &call).await? {
                Some(reply) => return Ok(reply),
                None => {
                    self.proof.withdraw();
                    self.probe_wanted.notify_one();
                }
            }
        }
        eval_script(&self.client, script, call).await
    }
}

/// Runs a script by SHA on `client`, loading it first if the node does not
/// know it.
///
/// Scripts run with the client's defaults: three attempts (a command whose
/// connection closed unanswered is written again after the reconnection:
/// test `a_release_lost_with_its_connection_is_sent_again_after_the_reconnection`;
/// the scripts are idempotent under re-sends), no fail-fast (commands wait
/// in fred's queue while it reconnects; a round's caller stops waiting at
/// node_timeout) and command_timeout. Per-call `Options` would not reach
/// them: fred 10.1 has no `LuaInterface` for `WithOptions`. Applying them as
/// a custom EVALSHA was tried and dropped: with fail-fast, batches sent
/// during a reconnect fail at once and their releases are lost, and fred
/// flushes custom commands one by one.
///
/// fred's request futures are about 7 KB each: boxed, they are written once
/// to the heap instead of being copied into every future that awaits them
/// (a node request, its timeout, its round), which cost the daemon a tenth
/// of its time in `memcpy` (docs/performance.md, workload (b)).
///
/// `call` makes the keys and arguments: again only when the node did not
/// know the script, so a call does not copy them in case it must retry.
pub(super) async fn eval_script<'a>(
    client: &Client,
    script: &Script,
    call: impl Fn() -> (Vec<&'a str>, Vec<Value>),
) -> Result<Value, NodeError> {
    let (keys, args) = call();
    let first = Box::pin(client.evalsha(script.sha.as_str(), keys, args)).await;
    let result = match first {
        Err(e) if e.details().starts_with("NOSCRIPT") => {
            // On a cluster, into every primary (fred would pick one).
            if client.is_clustered() {
                Box::pin(client.script_load_cluster::<(), _>(script.lua.as_str()))
                    .await
                    .map_err(failed)?;
            } else {
                Box::pin(client.script_load::<String, _>(script.lua.as_str()))
                    .await
                    .map_err(failed)?;
            }
            let (keys, args) = call();
            Box::pin(client.evalsha(script.sha.as_str(), keys, args)).await
        }
        other => other,
    };
    result.map_err(failed)
}

/// Runs a script by SHA on `client` only if the node has it: `None` on
/// `NOSCRIPT`, and nothing loaded (the scripts proved by the cache).
async fn eval_if_loaded<'a>(
    client: &Client,
    script: &Script,
    call: impl Fn() -> (Vec<&'a str>, Vec<Value>),
) -> Result<Option<Value>, NodeError> {
    let (keys, args) = call();
    match Box::pin(client.evalsha(script.sha.as_str(), keys, args)).await {
        Ok(reply) => Ok(Some(reply)),
        Err(e) if e.details().starts_with("NOSCRIPT") => Ok(None),
        Err(e) => Err(failed(e)),
    }
}

/// A fred error as a node's: its command timeout (late-proof in the
/// vendored fred, docs/design.md#late-timers) as `TimedOut`.
pub(super) fn failed(e: fred::error::Error) -> NodeError {
    if *e.kind() == fred::error::ErrorKind::Timeout {
        return NodeError::TimedOut;
    }
    NodeError::Failed(e.to_string())
}

/// Whether a fred error says nothing of the command itself (no answer: it
/// timed out, or the connection failed or closed) rather than being the
/// master's refusal of it: a probe that meets one learns nothing of the
/// master (docs/design.md#late-timers).
pub(super) fn unanswered(e: &fred::error::Error) -> bool {
    use fred::error::ErrorKind;
    matches!(e.kind(), ErrorKind::Timeout | ErrorKind::IO | ErrorKind::Canceled)
}

/// A duration in whole milliseconds, for a setting fred takes so.
pub(super) fn millis(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

/// A TTL argument: whole milliseconds, at least 1.
pub(super) fn ttl_arg(ttl: Duration) -> Value {
    Value::Integer(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX).max(1))
}

/// How a release is announced, as the scripts read it: never (empty), when
/// a refused attempt waits (`waited`), or `always`.
pub(super) fn announcement(announce: crate::redlock::node::Announce) -> Value {
    use crate::redlock::node::Announce;
    Value::from_static_str(match announce {
        Announce::No => "",
        Announce::IfWaited => "waited",
        Announce::Always => "always",
    })
}

/// A release's kind in ROUND (round.lua): announced never (`U`), when a
/// refused attempt waits (`W`), or always (`A`).
pub(super) fn release_kind(announce: crate::redlock::node::Announce) -> Value {
    use crate::redlock::node::Announce;
    Value::from_static_str(match announce {
        Announce::No => "U",
        Announce::IfWaited => "W",
        Announce::Always => "A",
    })
}

/// `text` with the glob characters of a `SCAN MATCH` pattern escaped, so
/// it matches itself only.
pub(super) fn glob_escaped(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '^' | '-') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// Times one script call. A call dropped before its answer counts as a
/// failed request when the round timeout had passed, and as not awaited
/// when its round was decided without it.
pub(super) struct Timing<'a> {
    observer: Option<&'a (Arc<dyn Observer>, usize)>,
    started: Instant,
    timeout: Duration,
    answered: bool,
}

impl Timing<'_> {
    /// Records the answer's latency, as a failure unless `ok`.
    pub(super) fn answered(mut self, ok: bool) {
        self.answered = true;
        if let Some((observer, index)) = self.observer {
            observer.node_request(*index, self.started.elapsed(), ok);
        }
    }
}

impl Drop for Timing<'_> {
    fn drop(&mut self) {
        let Some((observer, index)) = self.observer.filter(|_| !self.answered) else {
            return;
        };
        let took = self.started.elapsed();
        if took >= self.timeout {
            observer.node_request(*index, took, false);
        } else {
            observer.node_not_awaited(*index);
        }
    }
}
