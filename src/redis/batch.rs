//! Round-1 lock requests and releases to one master, batched into one
//! `ROUND` script call (docs/design.md#batching), and the timing of every
//! script call for the observer.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use fred::prelude::{Client, Value};
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use super::eval::{eval_if_loaded, eval_script};
use super::proof::Proof;
use super::scripts::Script;
use super::{keys, replies};
use crate::redlock::node::NodeError;
use crate::redlock::observer::Observer;

/// At most this many requests go in one `ROUND` call.
pub(super) const BATCH_MAX: usize = 64;

/// Round-1 lock requests and releases to one master, sent in batches
/// (`ROUND`), first come first sent. A request that finds no batch on its
/// way leaves at once, sent by its caller, in a batch of one; requests that
/// come while one is on its way queue and leave together in the next, sent
/// by a task (so a caller whose round was decided early cannot cut it).
/// Under load the master runs one script, one `INFO` and one counter write
/// per batch instead of per request, and the daemon sends one command.
///
/// One batch at a time per master keeps the order in which the requests
/// were made on the wire, through a `NOSCRIPT` reload and re-send too: a
/// release never overtakes the lock it releases.
pub(super) struct Batches {
    pub(super) client: Client,
    /// ROUND with its `INFO` check: always safe, reloaded on `NOSCRIPT`.
    pub(super) script: Arc<Script>,
    /// ROUND proved by the script cache (docs/design.md#process-identity),
    /// used while the proof says it was loaded into the process now
    /// verified; never reloaded here.
    pub(super) proof: Arc<Proof>,
    /// Told when the cached script was missing (a probe should look).
    pub(super) probe_wanted: Arc<Notify>,
    /// This daemon's tag, how releases are announced (`PUBLISH`, replaced
    /// by the probe: `publish`) and how long (ms) a lock refused by shared
    /// holders keeps new ones out.
    pub(super) head_args: [Value; 3],
    /// Whether releases are announced by `SPUBLISH` (a cluster whose every
    /// primary is Redis 7 or later: sharded pub/sub) rather than `PUBLISH`;
    /// the cluster probe sets it, shared by every lane of the position.
    pub(super) sharded_publish: Arc<AtomicBool>,
    pub(super) node_timeout: Duration,
    /// Where each request's latency and errors go, with this master's
    /// index (`RedisNode::observed`; releases are recorded here, by
    /// `release_answered`, the rest by their caller's `Timing`).
    pub(super) observer: OnceLock<(Arc<dyn Observer>, usize)>,
    /// Told when the batch slot is free with nothing queued (`settled`).
    pub(super) idle: Notify,
    pub(super) pending: Mutex<Pending>,
}

#[derive(Default)]
pub(super) struct Pending {
    requests: Vec<Queued>,
    /// A batch is on its way (its caller's, or a task running `send`).
    sending: bool,
}

/// One request: its four keys (`RequestKeys`), and its four arguments
/// (`L` or `U`, the value, the TTL or the announcement, the holder tag or
/// nothing).
struct Queued {
    keys: RequestKeys,
    args: [Value; 4],
    queued_at: Instant,
    answer: oneshot::Sender<Result<i64, NodeError>>,
}

impl Queued {
    /// A lock request whose caller gave up after waiting a node timeout in
    /// the queue: not sent (whatever follows it, a release included, is
    /// behind it in the queue). Releases always go.
    fn stale(&self, node_timeout: Duration) -> bool {
        self.answer.is_closed() && !is_release(&self.args) && self.queued_at.elapsed() >= node_timeout
    }
}

/// A request's keys: the lock key, its waiting mark, and its bucket's
/// fence counter and verified marker (docs/design.md#keys).
pub(super) type RequestKeys = [String; 4];

/// The keys of a request on lock `key`.
pub(super) fn request_keys(key: &str) -> RequestKeys {
    [
        key.to_owned(),
        keys::beside(key, "waiting:"),
        keys::of_bucket(key, "fence"),
        keys::of_bucket(key, "verified"),
    ]
}

/// Whether a request's arguments are a release's (`U`), not a lock's (`L`).
fn is_release(args: &[Value; 4]) -> bool {
    matches!(&args[0], Value::String(kind) if &**kind == "U")
}

/// A call that runs to its end: awaited, it is the call; dropped before
/// its end, it goes on in a task of its own (on the runtime it was dropped
/// on; without one, the runtime is shutting down and it goes with it).
struct Finish<F: Future + Send + 'static>(Option<Pin<Box<F>>>);

impl<F: Future + Send + 'static> Finish<F> {
    fn new(call: F) -> Finish<F> {
        Finish(Some(Box::pin(call)))
    }
}

impl<F: Future + Send + 'static> Future for Finish<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let Some(call) = self.0.as_mut() else {
            return Poll::Pending;
        };
        let output = ready!(call.as_mut().poll(cx));
        self.0 = None;
        Poll::Ready(output)
    }
}

impl<F: Future + Send + 'static> Drop for Finish<F> {
    fn drop(&mut self) {
        if let (Some(call), Ok(runtime)) = (self.0.take(), tokio::runtime::Handle::try_current()) {
            runtime.spawn(async move {
                let _ = call.await;
            });
        }
    }
}

/// The batch slot, held by a caller sending its own request: given back
/// when the call ends or is dropped, and then passed on to what queued
/// meanwhile.
struct BatchTurn(Arc<Batches>);

impl Drop for BatchTurn {
    fn drop(&mut self) {
        let mut pending = self.0.pending();
        // No runtime: it is shutting down, and what queued goes with it.
        let runtime = tokio::runtime::Handle::try_current().ok();
        pending.sending = !pending.requests.is_empty() && runtime.is_some();
        if pending.sending
            && let Some(runtime) = runtime
        {
            runtime.spawn(Arc::clone(&self.0).send());
        } else {
            self.0.idle.notify_waiters();
        }
    }
}

/// Held by a task running `Batches::send`: the batch slot is free again
/// however the task ends (`done` when `send` freed it itself, under the
/// same lock as its last look at the queue).
struct Sending<'a> {
    batches: &'a Batches,
    done: bool,
}

impl Drop for Sending<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.batches.pending().sending = false;
            self.batches.idle.notify_waiters();
        }
    }
}

impl Batches {
    /// Another batches to the same master, sharing this one's client,
    /// scripts, proof flag and observer (on a cluster: one per slot,
    /// `cluster::Lanes`).
    pub(super) fn copy(&self) -> Batches {
        Batches {
            client: self.client.clone(),
            // Shared, not copied: a cluster position may have a batches per
            // slot, 16,384 of them.
            script: Arc::clone(&self.script),
            proof: Arc::clone(&self.proof),
            probe_wanted: Arc::clone(&self.probe_wanted),
            head_args: self.head_args.clone(),
            sharded_publish: Arc::clone(&self.sharded_publish),
            node_timeout: self.node_timeout,
            observer: self.observer.clone(),
            idle: Notify::new(),
            pending: Mutex::default(),
        }
    }

    /// How releases are announced: `PUBLISH`, or `SPUBLISH` on a cluster
    /// that has it (sharded: only the shard of the lock's bucket carries it).
    pub(super) fn publish(&self) -> Value {
        Value::from_static_str(if self.sharded_publish.load(Ordering::Relaxed) {
            "SPUBLISH"
        } else {
            "PUBLISH"
        })
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One request's answer. With no batch on its way, the caller sends it
    /// itself, with no task between; otherwise it queues for the next batch.
    pub(super) async fn request(self: &Arc<Self>, key: &str, args: [Value; 4]) -> Result<i64, NodeError> {
        let keys = request_keys(key);
        // Whether a batch is on its way, and queueing behind it, are decided
        // under one lock: a sender that finds the queue empty stops, so a
        // request queued after that look would wait with nobody to send it.
        let queued = {
            let mut pending = self.pending();
            if pending.sending {
                let (answer, reply) = oneshot::channel();
                pending.requests.push(Queued {
                    keys,
                    args,
                    queued_at: Instant::now(),
                    answer,
                });
                Err(reply)
            } else {
                pending.sending = true;
                Ok((keys, args))
            }
        };
        match queued {
            Ok((keys, args)) if is_release(&args) => {
                // A release is never dropped (as in `send`): should its caller
                // stop waiting (the engine answers a release at quorum), a
                // task finishes the call, a `NOSCRIPT` reload included, and
                // gives the slot back only then, so nothing overtakes it.
                let (slot, started) = (BatchTurn(Arc::clone(self)), Instant::now());
                Finish::new(async move {
                    let answers = slot.0.call(&[(&keys, &args)]).await;
                    slot.0.release_answered(started, &answers, 0);
                    drop(slot);
                    Ok(answers?.remove(0))
                })
                .await
            }
            Ok((keys, args)) => {
                let _slot = BatchTurn(Arc::clone(self));
                // Boxed: most requests queue, and a request's future (one per
                // node in every round, each boxed by the round) then stays
                // small enough for the allocator's per-thread cache.
                let mut answers = Box::pin(self.call(&[(&keys, &args)])).await?;
                Ok(answers.remove(0))
            }
            Err(reply) => reply
                .await
                .unwrap_or_else(|_| Err(NodeError("the batch was dropped".into()))),
        }
    }

    /// Sends one batch, reloading the script on `NOSCRIPT`; an error
    /// answers every request in it.
    async fn call(&self, requests: &[(&RequestKeys, &[Value; 4])]) -> Result<Vec<i64>, NodeError> {
        let call = || {
            let mut keys = Vec::with_capacity(4 * requests.len());
            let mut args = Vec::with_capacity(3 + 4 * requests.len());
            args.extend([self.head_args[0].clone(), self.publish(), self.head_args[2].clone()]);
            for (four_keys, four) in requests {
                keys.extend(four_keys.iter().map(String::as_str));
                args.extend(four.iter().cloned());
            }
            (keys, args)
        };
        if let Some(variants) = self.proof.in_use() {
            match eval_if_loaded(&self.client, &variants.round, call).await? {
                Some(reply) => return replies::round(reply, requests.len()),
                // Not in this process: it is not the one this daemon
                // verified, or its scripts were flushed. The batch goes
                // again with the INFO check, which tells the two apart.
                None => {
                    self.proof.withdraw();
                    self.probe_wanted.notify_one();
                }
            }
        }
        let reply = eval_script(&self.client, &self.script, call).await?;
        replies::round(reply, requests.len())
    }

    /// Resolves once no batch is on its way to this master and none waits:
    /// every request made so far, releases answered at quorum included,
    /// has had its answer.
    pub(super) async fn settled(&self) {
        loop {
            let idle = self.idle.notified();
            let mut idle = std::pin::pin!(idle);
            idle.as_mut().enable();
            if !self.pending().sending {
                return;
            }
            idle.await;
        }
    }

    /// Records the answer to request `i` of a batch, a release, as this
    /// master's, whoever waits for it: the engine answers a release at
    /// quorum, and the rest still show in the master's latency and errors.
    /// A failed batch, an answer that is not a release's, or one after the
    /// node timeout (as it would in a round) counts as a failure.
    fn release_answered(&self, started: Instant, answers: &Result<Vec<i64>, NodeError>, i: usize) {
        if let Some((observer, index)) = self.observer.get() {
            let took = started.elapsed();
            let ok = answers
                .as_ref()
                .is_ok_and(|a| a.get(i).is_some_and(|a| replies::released(*a).is_ok()));
            observer.node_request(*index, took, ok && took < self.node_timeout);
        }
    }

    /// Sends batches until none waits.
    async fn send(self: Arc<Self>) {
        // Should the task end otherwise (a panic, a runtime shutting down),
        // the next request sends, and what queued goes with its batch.
        let mut sending = Sending {
            batches: &self,
            done: false,
        };
        loop {
            let batch: Vec<Queued> = {
                let mut pending = self.pending();
                pending.requests.retain(|request| !request.stale(self.node_timeout));
                if pending.requests.is_empty() {
                    pending.sending = false;
                    sending.done = true;
                    self.idle.notify_waiters();
                    return;
                }
                let n = pending.requests.len().min(BATCH_MAX);
                pending.requests.drain(..n).collect()
            };
            let requests: Vec<_> = batch.iter().map(|r| (&r.keys, &r.args)).collect();
            let answers = self.call(&requests).await;
            drop(requests);
            for (i, request) in batch.iter().enumerate().filter(|(_, r)| is_release(&r.args)) {
                self.release_answered(request.queued_at, &answers, i);
            }
            match answers {
                Ok(answers) => {
                    for (request, answer) in batch.into_iter().zip(answers) {
                        let _ = request.answer.send(Ok(answer));
                    }
                }
                Err(e) => {
                    for request in batch {
                        let _ = request.answer.send(Err(e.clone()));
                    }
                }
            }
        }
    }
}

/// Times one script call. A call dropped before its answer counts as a
/// failed request when the round timeout had passed, and as not awaited
/// when its round was decided without it.
pub(super) struct Timing<'a> {
    pub(super) observer: Option<&'a (Arc<dyn Observer>, usize)>,
    pub(super) started: Instant,
    pub(super) timeout: Duration,
    pub(super) answered: bool,
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
