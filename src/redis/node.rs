//! The `Node` implementation over one fred client per Redis master: the
//! scripts of `scripts.rs` by `EVALSHA`, reloaded on `NOSCRIPT` (a restarted
//! node has an empty script cache), plus the monitor's probe and repair.
//! What the node answers is read by `replies.rs` (pure, unit-tested, fuzzed).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use fred::prelude::{
    Client, ClientLike, Config as FredConfig, EventInterface, KeysInterface, LuaInterface, ReconnectPolicy, Value,
};
use fred::types::config::TlsConnector;
use fred::types::{Builder, ClusterHash, CustomCommand};

use super::replies::{self, Locked};
use super::scripts::{EXTEND, HAND_OFF, INSPECT, PUBLISH_FENCE, REPAIR, ROUND, Script, released_channel};
use crate::redlock::health::{NodeHealth, Observation, Standing};
use crate::redlock::node::{Announce, Extension, KeyView, Node, NodeError, Swap};
use crate::telemetry::metrics::Metrics;

/// How to reach one master.
#[derive(Clone)]
pub struct RedisNodeConfig {
    /// `redis://[user:password@]host:port[/db]` or `rediss://…` for TLS.
    pub url: String,
    /// The prefix of every key (`<prefix>:fence`, `<prefix>:lock:<resource>`).
    pub key_prefix: String,
    /// Bound on establishing a connection.
    pub connect_timeout: Duration,
    /// Bound on one command inside fred (the engine applies its own, shorter,
    /// per-round timeout on top).
    pub command_timeout: Duration,
    /// Reconnect backoff: first delay.
    pub reconnect_min_delay: Duration,
    /// Reconnect backoff: largest delay.
    pub reconnect_max_delay: Duration,
    /// The engine's per-node bound in a round.
    pub node_timeout: Duration,
    /// TLS roots and client certificate for `rediss://`; `None` = system roots.
    pub tls: Option<TlsConnector>,
}

/// One Redis master behind a fred client (auto-pipelined: concurrent
/// requests share the connection).
pub struct RedisNode {
    name: String,
    client: Client,
    /// A round's wait for this master (for `Timing`).
    node_timeout: Duration,
    fence_key: String,
    marker_key: String,
    /// `<prefix>:`, the start of every lock key.
    key_start: String,
    /// Round-1 lock requests and releases on their way to this master, in
    /// batches.
    batches: Arc<Batches>,
    hand_off: Script,
    publish_fence: Script,
    extend: Script,
    repair: Script,
    inspect: Script,
    health: Arc<NodeHealth>,
    probe_wanted: Arc<Notify>,
    /// The connection generation the scripts were last loaded on.
    scripts_generation: AtomicU64,
    /// Names this client in the waiting marks its refused attempts leave,
    /// so its own hand-offs can tell its waiters from other daemons'.
    waiter_tag: Value,
}

impl RedisNode {
    /// Creates the client and starts connecting in the background; a node
    /// that is down now keeps being retried with backoff.
    ///
    /// # Errors
    /// When the URL cannot be parsed.
    pub fn connect(config: &RedisNodeConfig) -> Result<RedisNode, String> {
        let (builder, name) = builder(config)?;
        let client = builder.build().map_err(|e| format!("{e}"))?;
        let log_name = name.clone();
        client.on_error(move |(error, _)| {
            tracing::warn!(node = %log_name, %error, "redis connection error");
            async { Ok(()) }
        });
        // A re-made connection may lead to a restarted or promoted process:
        // keep the node out of acquire quorums until a probe has looked.
        let health = Arc::new(NodeHealth::default());
        let probe_wanted = Arc::new(Notify::new());
        let (h, p) = (health.clone(), probe_wanted.clone());
        // fred reports the first connection as a reconnect too, from a task
        // of its own, which can run after the startup probe marked the node
        // usable; the node starts unverified anyway, so only later
        // connections invalidate it. Every one asks for a probe.
        let first = std::sync::atomic::AtomicBool::new(true);
        client.on_reconnect(move |_| {
            if !first.swap(false, Ordering::SeqCst) {
                h.invalidate();
            }
            p.notify_one();
            async { Ok(()) }
        });
        client.connect();
        let waiter_tag = Value::from(crate::redlock::LockValue::random().expose());
        let fence_key = format!("{}:fence", config.key_prefix);
        let marker_key = format!("{}:verified", config.key_prefix);
        let batches = Arc::new(Batches {
            client: client.clone(),
            script: Script::new(ROUND),
            head_keys: [fence_key.clone(), marker_key.clone()],
            head_args: [waiter_tag.clone(), Value::from(released_channel(&config.key_prefix))],
            node_timeout: config.node_timeout,
            observer: OnceLock::new(),
            idle: Notify::new(),
            pending: Mutex::default(),
        });
        Ok(RedisNode {
            name,
            client,
            node_timeout: config.node_timeout,
            fence_key,
            key_start: format!("{}:", config.key_prefix),
            marker_key,
            batches,
            hand_off: Script::new(HAND_OFF),
            publish_fence: Script::new(PUBLISH_FENCE),
            extend: Script::new(EXTEND),
            repair: Script::new(REPAIR),
            inspect: Script::new(INSPECT),
            health,
            probe_wanted,
            scripts_generation: AtomicU64::new(u64::MAX),
            waiter_tag,
        })
    }

    /// Records each lock request's latency and errors as master `index`.
    #[must_use]
    pub fn observed(self, metrics: Arc<Metrics>, index: usize) -> RedisNode {
        let _ = self.batches.observer.set((metrics, index));
        self
    }

    /// Waits until the first connection is up (for startup logs and tests).
    ///
    /// # Errors
    /// When the connection failed or did not come up within `limit`.
    pub async fn wait_connected(&self, limit: Duration) -> Result<(), String> {
        match tokio::time::timeout(limit, self.client.wait_for_connect()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("not connected after {limit:?}")),
        }
    }

    /// Resolves once every lock request and release sent to this master so
    /// far has had its answer (at shutdown: the deletes of releases that
    /// were answered at quorum may still be on their way to the slower
    /// masters).
    pub async fn settled(&self) {
        self.batches.settled().await;
    }

    /// The fred client, for administrative commands.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The node's standing, as the monitor last decided it.
    pub fn health(&self) -> &NodeHealth {
        &self.health
    }

    /// Resolves when something (a reconnect, an unverified reply) asks for
    /// a probe sooner than the next tick.
    pub async fn probe_wanted(&self) {
        self.probe_wanted.notified().await;
    }

    /// Looks at the node: role, eviction policy, identity, uptime, clock,
    /// marker, and (re)loads the scripts.
    ///
    /// # Errors
    /// When the node does not answer.
    pub async fn probe(&self) -> Result<Observation, NodeError> {
        let info = replies::info(self.client.info(None).await.map_err(node_error)?)?;
        let config = CustomCommand::new_static("CONFIG", ClusterHash::FirstKey, false);
        let policy = self
            .client
            .custom(config, vec!["GET", "maxmemory-policy"])
            .await
            .map_err(node_error)?;
        let maxmemory_policy = replies::config_get(policy, "maxmemory-policy")?;
        // Once per connection (DESIGN §1); NOSCRIPT reloads cover the rest.
        let generation = self.health.generation();
        let mut scripts_loaded = Ok(());
        if self.scripts_generation.load(Ordering::SeqCst) != generation {
            let scripts = [
                &self.batches.script,
                &self.hand_off,
                &self.publish_fence,
                &self.extend,
                &self.repair,
                &self.inspect,
            ];
            for script in scripts {
                if let Err(e) = self.client.script_load::<String, _>(script.lua).await {
                    scripts_loaded = Err(e.to_string());
                }
            }
            if scripts_loaded.is_ok() {
                self.scripts_generation.store(generation, Ordering::SeqCst);
            }
        }
        let marker = replies::marker(self.client.get(self.marker_key.as_str()).await.map_err(node_error)?)?;
        let before = Instant::now();
        let time = CustomCommand::new_static("TIME", ClusterHash::FirstKey, false);
        let time = self
            .client
            .custom(time, Vec::<String>::new())
            .await
            .map_err(node_error)?;
        let half_trip = before.elapsed() / 2;
        let sampled_at = before + half_trip;
        Ok(Observation {
            role: info.role,
            maxmemory_policy,
            run_id: info.run_id,
            master_replid: info.master_replid,
            uptime: info.uptime,
            node_time_us: replies::time(time)?,
            sampled_at,
            time_uncertainty: half_trip,
            scripts_loaded,
            marker,
        })
    }

    /// The node's fence counter (`None` when it has none).
    ///
    /// # Errors
    /// When the node does not answer.
    pub async fn read_fence(&self) -> Result<Option<u64>, NodeError> {
        replies::fence(self.client.get(self.fence_key.as_str()).await.map_err(node_error)?)
    }

    /// Raises the fence counter to at least `floor` and marks the data of
    /// process `identity` verified (the last step before a node rejoins).
    ///
    /// # Errors
    /// When the node does not answer.
    pub async fn repair(&self, floor: Option<u64>, identity: &str) -> Result<(), NodeError> {
        let floor = floor.map(|f| f.to_string()).unwrap_or_default();
        let call = || {
            let keys = vec![self.fence_key.as_str(), self.marker_key.as_str()];
            (keys, vec![Value::from(floor.as_str()), Value::from(identity)])
        };
        eval_script(&self.client, &self.repair, call).await.map(drop)
    }

    /// The key that marks lock `key` (`<prefix>:<name>`) as waited for:
    /// `<prefix>:waiting:<name>`, apart from every lock key (those go on
    /// with `lock:` or `tenant:`).
    fn waiting_key(&self, key: &str) -> String {
        let name = key.strip_prefix(self.key_start.as_str()).unwrap_or(key);
        // One allocation of the right size (not `format!`): five per lock
        // request (issue #7, (b)).
        let mut waiting = String::with_capacity(self.key_start.len() + "waiting:".len() + name.len());
        waiting.push_str(&self.key_start);
        waiting.push_str("waiting:");
        waiting.push_str(name);
        waiting
    }

    /// Runs a lock script by SHA with the lock key, fence key, marker key
    /// and, for the scripts that use it, the lock's waiting mark.
    async fn eval(&self, script: &Script, key: &str, args: Vec<Value>) -> Result<Value, NodeError> {
        let waiting = script.uses_waiting_mark.then(|| self.waiting_key(key));
        let mut keys = Vec::with_capacity(4);
        keys.extend([key, self.fence_key.as_str(), self.marker_key.as_str()]);
        keys.extend(waiting.as_deref());
        self.eval_observed(script, keys, args).await
    }

    /// Runs a script by SHA with `keys`, recording its latency and errors
    /// as this master's. (The one-lock scripts: their keys and arguments are
    /// copied for a possible NOSCRIPT retry; the batches build theirs twice
    /// instead, `Batches::call`.)
    async fn eval_observed(&self, script: &Script, keys: Vec<&str>, args: Vec<Value>) -> Result<Value, NodeError> {
        let timing = self.timing();
        let answer = eval_script(&self.client, script, || (keys.clone(), args.clone())).await;
        timing.answered(answer.is_ok());
        answer
    }

    /// Starts timing one request to this master: its latency is recorded
    /// when `answered`, as a failure unless it says ok. (A guard rather than
    /// a wrapping future: the request's future is not stored twice.)
    fn timing(&self) -> Timing<'_> {
        Timing {
            observer: self.batches.observer.get(),
            started: Instant::now(),
            timeout: self.node_timeout,
            answered: false,
        }
    }
}

/// Runs a script by SHA on `client`, loading it first if the node does not
/// know it.
async fn eval_script<'a>(
    client: &Client,
    script: &Script,
    call: impl Fn() -> (Vec<&'a str>, Vec<Value>),
) -> Result<Value, NodeError> {
    // Scripts run with the client's defaults: three attempts (a command
    // whose connection closed unanswered is written again after the
    // reconnection: test
    // `a_release_lost_with_its_connection_is_sent_again_after_the_reconnection`;
    // the scripts are idempotent under re-sends), no fail-fast (commands
    // wait in fred's queue while it reconnects; a round's caller stops
    // waiting at node_timeout) and command_timeout. Per-call `Options`
    // would not reach them: fred 10.1 has no `LuaInterface` for
    // `WithOptions`, so `with_options(…).evalsha(…)` derefs to the plain
    // client (the options this code used to pass were dropped that way).
    // Applying them as a custom EVALSHA was tried and dropped: with
    // fail-fast, batches sent during a reconnect fail at once and their
    // releases are lost, and fred flushes custom commands one by one.
    //
    // fred's request futures are about 7 KB each: boxed, they are written
    // once to the heap instead of being copied into every future that
    // awaits them (a node request, its timeout, its round), which cost the
    // daemon a tenth of its time in `memcpy` (issue #7, (b)).
    //
    // `call` makes the keys and arguments: again only when the node did not
    // know the script, so a call does not copy them in case it must retry.
    let (keys, args) = call();
    let first = Box::pin(client.evalsha(script.sha.as_str(), keys, args)).await;
    let result = match first {
        Err(e) if e.details().starts_with("NOSCRIPT") => {
            Box::pin(client.script_load::<String, _>(script.lua))
                .await
                .map_err(node_error)?;
            let (keys, args) = call();
            Box::pin(client.evalsha(script.sha.as_str(), keys, args)).await
        }
        other => other,
    };
    result.map_err(node_error)
}

/// At most this many requests go in one `ROUND` call.
pub const BATCH_MAX: usize = 64;

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
struct Batches {
    client: Client,
    script: Script,
    /// The fence counter and the marker.
    head_keys: [String; 2],
    /// This daemon's tag and the release channel.
    head_args: [Value; 2],
    node_timeout: Duration,
    /// Where each request's latency and errors go, with this master's
    /// index (`RedisNode::observed`; releases are recorded here, by
    /// `release_answered`, the rest by their caller's `Timing`).
    observer: OnceLock<(Arc<Metrics>, usize)>,
    /// Told when the batch slot is free with nothing queued (`settled`).
    idle: Notify,
    pending: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    requests: Vec<Queued>,
    /// A batch is on its way (its caller's, or a task running `send`).
    sending: bool,
}

/// One request: its lock key and waiting mark, and its three arguments
/// (`L` or `U`, the value, the TTL or the announcement).
struct Queued {
    key: String,
    waiting: String,
    args: [Value; 3],
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

/// Whether a request's arguments are a release's (`U`), not a lock's (`L`).
fn is_release(args: &[Value; 3]) -> bool {
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
struct Slot(Arc<Batches>);

impl Drop for Slot {
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
    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One request's answer. With no batch on its way, the caller sends it
    /// itself, with no task between; otherwise it queues for the next batch.
    async fn request(self: &Arc<Self>, key: &str, waiting: String, args: [Value; 3]) -> Result<i64, NodeError> {
        // Whether a batch is on its way, and queueing behind it, are decided
        // under one lock: a sender that finds the queue empty stops, so a
        // request queued after that look would wait with nobody to send it.
        let queued = {
            let mut pending = self.pending();
            if pending.sending {
                let (answer, reply) = oneshot::channel();
                pending.requests.push(Queued {
                    key: key.to_owned(),
                    waiting,
                    args,
                    queued_at: Instant::now(),
                    answer,
                });
                Err(reply)
            } else {
                pending.sending = true;
                Ok((waiting, args))
            }
        };
        match queued {
            Ok((waiting, args)) if is_release(&args) => {
                // A release is never dropped (as in `send`): should its caller
                // stop waiting (the engine answers a release at quorum), a
                // task finishes the call, a `NOSCRIPT` reload included, and
                // gives the slot back only then, so nothing overtakes it.
                let (slot, key, started) = (Slot(Arc::clone(self)), key.to_owned(), Instant::now());
                Finish::new(async move {
                    let answers = slot.0.call(&[(key.as_str(), waiting.as_str(), &args)]).await;
                    slot.0.release_answered(started, &answers, 0);
                    drop(slot);
                    Ok(answers?.remove(0))
                })
                .await
            }
            Ok((waiting, args)) => {
                let _slot = Slot(Arc::clone(self));
                // Boxed: most requests queue, and a request's future (one per
                // node in every round, each boxed by the round) then stays
                // small enough for the allocator's per-thread cache.
                let mut answers = Box::pin(self.call(&[(key, waiting.as_str(), &args)])).await?;
                Ok(answers.remove(0))
            }
            Err(reply) => reply
                .await
                .unwrap_or_else(|_| Err(NodeError("the batch was dropped".into()))),
        }
    }

    /// Sends one batch, reloading the script on `NOSCRIPT`; an error
    /// answers every request in it.
    async fn call(&self, requests: &[(&str, &str, &[Value; 3])]) -> Result<Vec<i64>, NodeError> {
        let call = || {
            let mut keys = Vec::with_capacity(2 + 2 * requests.len());
            keys.extend(self.head_keys.iter().map(String::as_str));
            let mut args = Vec::with_capacity(2 + 3 * requests.len());
            args.extend(self.head_args.iter().cloned());
            for (key, waiting, three) in requests {
                keys.extend([*key, *waiting]);
                args.extend(three.iter().cloned());
            }
            (keys, args)
        };
        let reply = eval_script(&self.client, &self.script, call).await?;
        replies::round(reply, requests.len())
    }

    /// Resolves once no batch is on its way to this master and none waits:
    /// every request made so far, releases answered at quorum included,
    /// has had its answer.
    async fn settled(&self) {
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
        if let Some((metrics, index)) = self.observer.get() {
            let took = started.elapsed();
            let ok = answers
                .as_ref()
                .is_ok_and(|a| a.get(i).is_some_and(|a| replies::released(*a).is_ok()));
            metrics.node_request(*index, took, ok && took < self.node_timeout);
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
            let requests: Vec<_> = batch
                .iter()
                .map(|r| (r.key.as_str(), r.waiting.as_str(), &r.args))
                .collect();
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
struct Timing<'a> {
    observer: Option<&'a (Arc<Metrics>, usize)>,
    started: Instant,
    timeout: Duration,
    answered: bool,
}

impl Timing<'_> {
    /// Records the answer's latency, as a failure unless `ok`.
    fn answered(mut self, ok: bool) {
        self.answered = true;
        if let Some((metrics, index)) = self.observer {
            metrics.node_request(*index, self.started.elapsed(), ok);
        }
    }
}

impl Drop for Timing<'_> {
    fn drop(&mut self) {
        let Some((metrics, index)) = self.observer.filter(|_| !self.answered) else {
            return;
        };
        let took = self.started.elapsed();
        if took >= self.timeout {
            metrics.node_request(*index, took, false);
        } else {
            metrics.node_not_awaited(*index);
        }
    }
}

/// A fred builder for `config` (URL, TLS, timeouts, reconnect backoff) and
/// the node's `host:port` name.
///
/// # Errors
/// When the URL cannot be parsed.
pub fn builder(config: &RedisNodeConfig) -> Result<(Builder, String), String> {
    let mut fred_config = FredConfig::from_url(&config.url).map_err(|e| format!("{e}"))?;
    if let (Some(_), Some(connector)) = (&fred_config.tls, &config.tls) {
        fred_config.tls = Some(connector.clone().into());
    }
    // Retry the first connection too: the daemon starts with a node down.
    fred_config.fail_fast = false;
    let name = fred_config
        .server
        .hosts()
        .first()
        .map_or_else(|| "?".to_owned(), |s| format!("{}:{}", s.host, s.port));
    let policy = ReconnectPolicy::new_exponential(
        0,
        millis(config.reconnect_min_delay),
        millis(config.reconnect_max_delay),
        2,
    );
    let mut builder = Builder::from_config(fred_config);
    builder
        .with_connection_config(|c| {
            c.connection_timeout = config.connect_timeout;
            c.internal_command_timeout = config.command_timeout.max(config.connect_timeout);
            c.tcp.nodelay = Some(true);
        })
        .with_performance_config(|p| p.default_command_timeout = config.command_timeout)
        .set_policy(policy);
    Ok((builder, name))
}

fn node_error(e: fred::error::Error) -> NodeError {
    NodeError(e.to_string())
}

fn millis(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

fn ttl_arg(ttl: Duration) -> Value {
    Value::Integer(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX).max(1))
}

impl Node for RedisNode {
    fn name(&self) -> &str {
        &self.name
    }

    fn standing(&self) -> Standing {
        self.health.standing()
    }

    async fn try_lock(&self, key: &str, value: &str, ttl: Duration) -> Result<Option<u64>, NodeError> {
        let args = [Value::from_static_str("L"), Value::from(value), ttl_arg(ttl)];
        let timing = self.timing();
        let answer = self.batches.request(key, self.waiting_key(key), args).await;
        let locked = answer.and_then(replies::locked);
        timing.answered(matches!(locked, Ok(Locked::Granted(_) | Locked::Taken)));
        let unverified = match locked? {
            Locked::Granted(counter) => return Ok(Some(counter)),
            Locked::Taken => return Ok(None),
            Locked::NotVerified => "UNVERIFIED node not verified since its data was lost or it started",
            Locked::Changed => "UNVERIFIED node restarted or failed over since it was verified",
            Locked::CounterFull => {
                return Err(NodeError(
                    "COUNTER the fence counter would reach 2^53 (DESIGN §1 keeps it below); nothing granted".into(),
                ));
            }
        };
        self.health.invalidate();
        self.probe_wanted.notify_one();
        Err(NodeError(unverified.into()))
    }

    async fn hand_off(&self, key: &str, old: &str, new: &str, ttl: Duration) -> Result<Swap, NodeError> {
        let args = vec![old.into(), new.into(), ttl_arg(ttl), self.waiter_tag.clone()];
        replies::hand_off(self.eval(&self.hand_off, key, args).await?)
    }

    async fn publish_fence(&self, key: &str, value: &str, counter: u64) -> Result<bool, NodeError> {
        let args = vec![value.into(), Value::from(counter.to_string())];
        replies::flag(self.eval(&self.publish_fence, key, args).await?)
    }

    async fn extend(&self, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
        let keys = locks.iter().map(|lock| lock.key).collect();
        let mut args = Vec::with_capacity(locks.len() * 2);
        for lock in locks {
            args.extend([Value::from(lock.value), ttl_arg(lock.ttl)]);
        }
        // The engine's timeout (node_timeout) ends the wait; the command
        // itself runs with fred's defaults (see `eval_script`).
        let reply = self.eval_observed(&self.extend, keys, args).await?;
        replies::flags(reply, locks.len())
    }

    async fn unlock(&self, key: &str, value: &str, announce: Announce) -> Result<bool, NodeError> {
        let when = match announce {
            Announce::No => "",
            Announce::IfWaited => "waited",
            Announce::Always => "always",
        };
        let args = [
            Value::from_static_str("U"),
            Value::from(value),
            Value::from_static_str(when),
        ];
        // Timed by the batches, to its answer (`Batches::release_answered`).
        let answer = self.batches.request(key, self.waiting_key(key), args).await;
        answer.and_then(replies::released)
    }

    async fn inspect(&self, key: &str) -> Result<KeyView, NodeError> {
        replies::inspect(self.eval(&self.inspect, key, Vec::new()).await?)
    }
}
