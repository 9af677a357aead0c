//! Round-1 lock requests and releases to one master, batched into one
//! `ROUND` script call (docs/design.md#batching); on a cluster, one
//! primary's (ROUND by primary) or one slot's
//! (docs/design.md#cluster-positions).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use fred::prelude::Value;
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use super::conn::Conn;
use super::finish::Finish;
use super::replies;
use super::scripts::{Role, SCRIPTS};
use super::tickets::Ticket;
use crate::redlock::node::NodeError;

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
    /// The master's connection: client, proof, observer, announcements.
    pub(super) conn: Arc<Conn>,
    route: Route,
    /// Told when the batch slot is free with nothing queued (`settled`).
    idle: Notify,
    pending: Mutex<Pending>,
}

#[derive(Default)]
pub(super) struct Pending {
    requests: Vec<Queued>,
    /// A batch is on its way (its caller's, or a task running `send`).
    sending: bool,
}

/// One request: its two keys (`RequestKeys`), and its four arguments: its
/// kind (`L` a lock; a release, `U`, `W` or `A` as it is announced:
/// `conn::release_kind`), the value, and a lock's TTL and holder tag
/// (nothing for a release).
struct Queued {
    keys: RequestKeys,
    args: [Value; 4],
    queued_at: Instant,
    answer: oneshot::Sender<Result<i64, NodeError>>,
    /// On a cluster, its place on its slot's lane, given back once it is
    /// answered or dropped unsent.
    _ticket: Option<Ticket>,
}

impl Queued {
    /// A lock request whose caller gave up after waiting a node timeout in
    /// the queue: not sent (whatever follows it, a release included, is
    /// behind it in the queue). Releases always go.
    fn stale(&self, node_timeout: Duration) -> bool {
        self.answer.is_closed() && !is_release(&self.args) && self.queued_at.elapsed() >= node_timeout
    }
}

/// Where a batch goes.
pub(super) enum Route {
    /// ROUND with its keys declared: to a standalone master, or to the
    /// primary of one slot of a cluster (fred routes it by the slot).
    Direct,
    /// A primary's lane: ROUND by primary, over every slot it serves, on
    /// the primary of node ID `.0` (the script answers "not here" to all
    /// when it runs on another); what it answers "not here" goes again by
    /// slot, and sets `.1` (`Primaries` reads the slot map again).
    Primary(Value, Arc<AtomicBool>),
}

/// A request's keys: the lock key and its bucket's fence counter
/// (docs/design.md#keys); a release uses only the first. What else ROUND
/// touches it names itself.
pub(super) type RequestKeys = [String; 2];

/// The keys of a request on lock `key`.
fn request_keys(key: &str) -> RequestKeys {
    [Role::Lock, Role::Fence].map(|role| role.of(key))
}

/// Whether a request's arguments are a release's, not a lock's (`L`).
pub(super) fn is_release(args: &[Value; 4]) -> bool {
    !matches!(&args[0], Value::String(kind) if &**kind == "L")
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
    /// The batches of a master.
    pub(super) fn new(conn: Arc<Conn>) -> Batches {
        Batches::routed(conn, Route::Direct)
    }

    /// The batches of one slot or one primary of a cluster (`cluster::Lanes`).
    pub(super) fn routed(conn: Arc<Conn>, route: Route) -> Batches {
        Batches {
            conn,
            route,
            idle: Notify::new(),
            pending: Mutex::default(),
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One request's answer. With no batch on its way, the caller sends it
    /// itself, with no task between; otherwise it queues for the next batch.
    pub(super) async fn request(
        self: &Arc<Self>,
        key: &str,
        args: [Value; 4],
        ticket: Option<Ticket>,
    ) -> Result<i64, NodeError> {
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
                    _ticket: ticket,
                });
                Err(reply)
            } else {
                pending.sending = true;
                Ok((keys, args, ticket))
            }
        };
        match queued {
            Ok((keys, args, ticket)) if is_release(&args) => {
                // A release is never dropped (as in `send`): should its caller
                // stop waiting (the engine answers a release at quorum), a
                // task finishes the call, a `NOSCRIPT` reload included, and
                // gives the slot back only then, so nothing overtakes it.
                let (slot, started) = (BatchTurn(Arc::clone(self)), Instant::now());
                Finish::new(async move {
                    let answers = slot.0.call(&[(&keys, &args)]).await;
                    slot.0.release_answered(started, &answers, 0);
                    drop((slot, ticket));
                    Ok(answers?.remove(0))
                })
                .await
            }
            Ok((keys, args, _ticket)) => {
                let _slot = BatchTurn(Arc::clone(self));
                // Boxed: most requests queue, and a request's future (one per
                // node in every round, each boxed by the round) then stays
                // small enough for the allocator's per-thread cache.
                let mut answers = Box::pin(self.call(&[(&keys, &args)])).await?;
                Ok(answers.remove(0))
            }
            Err(reply) => reply
                .await
                .unwrap_or_else(|_| Err(NodeError::Failed("the batch was dropped".into()))),
        }
    }

    /// Sends one batch by its route; an error answers every request in it.
    async fn call(&self, requests: &[(&RequestKeys, &[Value; 4])]) -> Result<Vec<i64>, NodeError> {
        match &self.route {
            Route::Primary(id, stale) => self.call_by_primary(requests, id, stale).await,
            Route::Direct => self.call_round(requests, None).await,
        }
    }

    /// ROUND by primary; the requests it answers "not here" (their slot is
    /// served elsewhere, or moving) go again by slot, in their order, to
    /// wherever Redis redirects them, before the lane's next batch: so a
    /// slot's requests on this lane keep their order.
    async fn call_by_primary(
        &self,
        requests: &[(&RequestKeys, &[Value; 4])],
        id: &Value,
        stale: &AtomicBool,
    ) -> Result<Vec<i64>, NodeError> {
        let mut answers = self.call_round(requests, Some(id)).await?;
        let moved: Vec<usize> = (0..answers.len()).filter(|i| answers[*i] == NOT_HERE).collect();
        if moved.is_empty() {
            return Ok(answers);
        }
        stale.store(true, Ordering::Relaxed);
        // Each slot's in one call, every slot's at once.
        let again: Vec<_> = moved.iter().map(|i| requests[*i]).collect();
        let groups = super::keys::slot_groups(&again, |(keys, _)| keys[0].as_str());
        let calls = (groups.iter()).map(|(_, at)| {
            let slot: Vec<_> = at.iter().map(|i| again[*i]).collect();
            async move { self.call_round(&slot, None).await }
        });
        for ((_, at), got) in groups.iter().zip(futures::future::join_all(calls).await) {
            for (i, answer) in at.iter().zip(got?) {
                answers[moved[*i]] = answer;
            }
        }
        Ok(answers)
    }

    /// ROUND proved by the script cache while it may be used, else with
    /// its `INFO` check (which tells a process this daemon did not verify
    /// from one whose scripts were flushed), reloaded on `NOSCRIPT`: with
    /// its keys declared, or (`primary`, the node ID of the primary it is
    /// for) ROUND by primary, its keys in ARGV, one declared to route it.
    pub(super) async fn call_round(
        &self,
        requests: &[(&RequestKeys, &[Value; 4])],
        primary: Option<&Value>,
    ) -> Result<Vec<i64>, NodeError> {
        let conn = &self.conn;
        // The first request's bucket marker routes ROUND by primary.
        let marker = primary.and(requests.first()).map(|(keys, _)| Role::Marker.of(&keys[0]));
        let call = || {
            // The kinds, then a lock's key and fence counter with its value,
            // TTL and holder tag, a release's key with its value: declared
            // (round_requests.lua), or all in ARGV after the primary's node
            // ID (round_requests_by_primary.lua).
            let kinds: String = (requests.iter())
                .map(|(_, four)| match &four[0] {
                    Value::String(kind) => kind.chars().next().unwrap_or('L'),
                    _ => 'L',
                })
                .collect();
            let mut keys = Vec::with_capacity(2 * requests.len());
            let mut args = Vec::with_capacity(5 + 5 * requests.len());
            args.extend([conn.waiter_tag.clone(), conn.publish(), conn.writer_wait.clone()]);
            args.push(Value::from(kinds));
            args.extend(primary.cloned());
            for (two_keys, four) in requests {
                let (named, rest) = if is_release(four) {
                    (&two_keys[..1], &four[1..2])
                } else {
                    (&two_keys[..], &four[1..])
                };
                match primary {
                    Some(_) => args.extend(named.iter().map(|key| Value::from(key.as_str()))),
                    None => keys.extend(named.iter().map(String::as_str)),
                }
                args.extend(rest.iter().cloned());
            }
            (keys, args)
        };
        let reply = match &marker {
            Some(marker) => {
                let call = || (vec![marker.as_str()], call().1);
                conn.eval_proved(|v| &v.by_primary, &SCRIPTS.by_primary, call).await?
            }
            None => conn.eval_proved(|v| &v.round, &SCRIPTS.round, call).await?,
        };
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
        if let Some((observer, index)) = self.conn.observer.get() {
            let took = started.elapsed();
            let ok = answers
                .as_ref()
                .is_ok_and(|a| a.get(i).is_some_and(|a| replies::released(*a).is_ok()));
            observer.node_request(*index, took, ok && took < self.conn.node_timeout);
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
                pending
                    .requests
                    .retain(|request| !request.stale(self.conn.node_timeout));
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
            let releases = batch.iter().enumerate().filter(|(_, r)| is_release(&r.args));
            for (i, request) in releases {
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

/// What ROUND by primary answers for a request whose keys are not all on
/// that primary (its slot moved, or is moving): sent again by slot.
const NOT_HERE: i64 = -4;
