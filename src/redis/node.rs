//! The `Node` implementation over one fred client per Redis master: the
//! scripts of `scripts.rs` by `EVALSHA`, reloaded on `NOSCRIPT` (a restarted
//! node has an empty script cache), plus the monitor's probe and repair.
//! What the node answers is read by `replies.rs` (pure, unit-tested, fuzzed).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use fred::prelude::{Client, ClientLike, EventInterface, KeysInterface, Value};

use super::batch::{Batches, Timing};
use super::cluster::{Lanes, Order};
use super::connect::{RedisNodeConfig, builder};
use super::eval::{eval_if_loaded, eval_script, glob_escaped, node_error, ttl_arg};
use super::permits::PermitScripts;
use super::proof::Proof;
use super::replies::{self, Locked};
use super::scripts::{
    EXTEND, FORCE_RELEASE, HAND_OFF, INSPECT, PUBLISH_FENCE, REPAIR, ROUND, Script, VIEWS, released_channel,
};
use super::shared::SharedScripts;
use super::{keys, listing};
use crate::redlock::node::{Agreement, Announce, Extension, KeyView, Node, NodeError, RecordView, Swap};
use crate::redlock::observer::Observer;
use crate::redlock::standing::{NodeHealth, Standing};
use crate::redlock::{Mode, Permit};

/// One Redis master behind a fred client (auto-pipelined: concurrent
/// requests share the connection).
pub struct RedisNode {
    pub(super) name: String,
    pub(super) client: Client,
    /// The monitor's own connection (docs/design.md#quarantine): a probe
    /// never queues behind lock traffic, which under overload would make
    /// a healthy master look unreachable.
    pub(super) probe_client: Client,
    /// A round's wait for this master (for `Timing`).
    pub(super) node_timeout: Duration,
    /// `redis.key_prefix`.
    pub(super) prefix: String,
    /// The fence counter and verified marker of bucket 0, which the probe
    /// reads as the node's (docs/design.md#quarantine).
    pub(super) sentinel: [String; 2],
    /// A lock request found its bucket unverified: the next probe reads
    /// every bucket's marker.
    pub(super) bucket_unverified: Arc<std::sync::atomic::AtomicBool>,
    /// Round-1 lock requests and releases on their way to this master, in
    /// batches.
    pub(super) batches: Lanes,
    /// The shards the last probe saw, when the position is a cluster
    /// (`cluster_probe.rs`).
    pub(super) shards: Mutex<Vec<super::cluster_probe::Shard>>,
    pub(super) hand_off: Script,
    pub(super) publish_fence: Script,
    pub(super) extend: Script,
    pub(super) repair: Script,
    pub(super) inspect: Script,
    pub(super) views: Script,
    pub(super) force_release: Script,
    /// The scripts of shared locks (`shared.rs`).
    pub(super) shared: SharedScripts,
    /// The scripts of semaphores (`permits.rs`).
    pub(super) permits: PermitScripts,
    /// MANY: a set of locks (`many.rs`).
    pub(super) many: Script,
    pub(super) health: Arc<NodeHealth>,
    pub(super) probe_wanted: Arc<Notify>,
    /// The connection generation the scripts were last loaded on.
    pub(super) scripts_generation: AtomicU64,
    /// Names this client in the waiting marks its refused attempts leave,
    /// so its own hand-offs can tell its waiters from other daemons'.
    pub(super) waiter_tag: Value,
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
        let clustered = client.is_clustered();
        let bucket_unverified: Arc<std::sync::atomic::AtomicBool> = Arc::default();
        let log_name = name.clone();
        client.on_error(move |(error, _)| {
            tracing::warn!(node = %log_name, %error, "redis connection error");
            async { Ok(()) }
        });
        // A re-made connection may lead to a restarted or promoted process:
        // keep the node out of acquire quorums until a probe has looked.
        let health = Arc::new(NodeHealth::default());
        let probe_wanted = Arc::new(Notify::new());
        // Whether ROUND and HAND_OFF may go by the script cache's proof
        // (docs/design.md#process-identity): only until the connection is
        // re-made.
        let proof = Arc::new(Proof::default());
        let (h, p, c) = (health.clone(), probe_wanted.clone(), proof.clone());
        // fred reports the first connection as a reconnect too, from a task
        // of its own, which can run after the startup probe marked the node
        // usable; the node starts unverified anyway, so only later
        // connections invalidate it. Every one asks for a probe.
        let first = std::sync::atomic::AtomicBool::new(true);
        // On a cluster a reconnect is to one primary among several: the
        // probe it asks for holds out that primary's buckets if it changed,
        // and until then every grant's script checks the process itself
        // (docs/design.md#cluster-positions).
        client.on_reconnect(move |_| {
            if !first.swap(false, Ordering::SeqCst) && !clustered {
                h.invalidate();
            }
            c.withdraw();
            p.notify_one();
            async { Ok(()) }
        });
        client.connect();
        let probe_client = builder.build().map_err(|e| format!("{e}"))?;
        probe_client.connect();
        let waiter_tag = Value::from(crate::redlock::LockValue::random().expose());
        let batches = Arc::new(Batches {
            client: client.clone(),
            script: Arc::new(Script::new(ROUND)),
            proof,
            probe_wanted: probe_wanted.clone(),
            head_args: [
                waiter_tag.clone(),
                Value::from_static_str("PUBLISH"),
                ttl_arg(config.writer_wait),
            ],
            sharded_publish: Arc::new(std::sync::atomic::AtomicBool::new(clustered)),
            node_timeout: config.node_timeout,
            observer: OnceLock::new(),
            idle: Notify::new(),
            pending: Mutex::default(),
        });
        Ok(RedisNode {
            name,
            client,
            probe_client,
            node_timeout: config.node_timeout,
            prefix: config.key_prefix.clone(),
            sentinel: keys::bucket_keys(&config.key_prefix, 0),
            bucket_unverified,
            batches: Lanes::new(batches, clustered),
            shards: Mutex::default(),
            hand_off: Script::new(HAND_OFF),
            publish_fence: Script::new(PUBLISH_FENCE),
            extend: Script::new(EXTEND),
            repair: Script::new(REPAIR),
            inspect: Script::new(INSPECT),
            views: Script::new(VIEWS),
            force_release: Script::new(FORCE_RELEASE),
            shared: SharedScripts::new(),
            permits: PermitScripts::new(),
            many: Script::new(super::many::MANY),
            health,
            probe_wanted,
            scripts_generation: AtomicU64::new(u64::MAX),
            waiter_tag,
        })
    }

    /// Records each lock request's latency and errors as master `index`.
    #[must_use]
    pub fn observed(self, observer: Arc<dyn Observer>, index: usize) -> RedisNode {
        let _ = self.batches.first.observer.set((observer, index));
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
        for lane in self.batches.all() {
            lane.settled().await;
        }
    }

    /// The fred client, for administrative commands.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The key that marks lock `key` as waited for:
    /// `<prefix>:{<tag>}:waiting:<name>`, apart from every lock key (those
    /// go on with `lock:`, `tenant:` or `permit:`).
    pub(super) fn waiting_key(&self, key: &str) -> String {
        keys::beside(key, "waiting:")
    }

    /// Runs a lock script by SHA with the lock key, its bucket's fence
    /// counter and marker and, for the scripts that use it, the lock's
    /// waiting mark.
    async fn eval(&self, script: &Script, key: &str, args: Vec<Value>) -> Result<Value, NodeError> {
        let waiting = script.uses_waiting_mark.then(|| self.waiting_key(key));
        let (fence, marker) = (keys::of_bucket(key, "fence"), keys::of_bucket(key, "verified"));
        let mut keys = Vec::with_capacity(4);
        keys.extend([key, fence.as_str(), marker.as_str()]);
        keys.extend(waiting.as_deref());
        self.eval_observed(script, keys, args).await
    }

    /// Runs a script by SHA with `keys`, recording its latency and errors
    /// as this master's. (The one-lock scripts: their keys and arguments are
    /// copied for a possible NOSCRIPT retry; the batches build theirs twice
    /// instead, `Batches::call`.)
    pub(super) async fn eval_observed(
        &self,
        script: &Script,
        keys: Vec<&str>,
        args: Vec<Value>,
    ) -> Result<Value, NodeError> {
        let timing = self.timing();
        let answer = eval_script(&self.client, script, || (keys.clone(), args.clone())).await;
        timing.answered(answer.is_ok());
        answer
    }

    /// `Node::extend` for exclusive locks: EXTEND, one call.
    pub(super) async fn extend_exclusive(&self, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
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

    /// `Node::extend` for locks of one slot.
    async fn extend_in_one_slot(&self, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
        let plain = |lock: &Extension<'_>| Mode::of(lock.value) == Mode::Exclusive && Permit::of(lock.value).is_none();
        if !locks.iter().all(plain) {
            return self.extend_mixed(locks).await;
        }
        self.extend_exclusive(locks).await
    }

    /// How releases are announced: `PUBLISH`, or `SPUBLISH` on a cluster
    /// (sharded: only the shard of the lock's bucket carries it).
    pub(super) fn publish_command(&self) -> Value {
        self.batches.first.publish()
    }

    /// Starts timing one request to this master: its latency is recorded
    /// when `answered`, as a failure unless it says ok. (A guard rather than
    /// a wrapping future: the request's future is not stored twice.)
    fn timing(&self) -> Timing<'_> {
        Timing {
            observer: self.batches.first.observer.get(),
            started: Instant::now(),
            timeout: self.node_timeout,
            answered: false,
        }
    }
}

impl Node for RedisNode {
    fn name(&self) -> &str {
        &self.name
    }

    fn standing(&self) -> Standing {
        self.health.standing()
    }

    fn standing_of(&self, key: &str) -> Standing {
        // A standalone master stands as a whole: no bucket to work out.
        if !self.clustered() {
            return self.health.standing();
        }
        self.health.standing_for(crate::redlock::buckets::slot(key))
    }

    async fn try_lock(&self, key: &str, value: &str, ttl: Duration, holder: &str) -> Result<Option<u64>, NodeError> {
        let args = [
            Value::from_static_str("L"),
            Value::from(value),
            ttl_arg(ttl),
            Value::from(holder),
        ];
        let timing = self.timing();
        let answer = self.batches.of(key).request(key, args).await;
        let locked = answer.and_then(replies::locked);
        timing.answered(matches!(locked, Ok(Locked::Granted(_) | Locked::Taken)));
        self.counted_grant(locked?)
    }

    async fn try_share(&self, key: &str, value: &str, ttl: Duration, _: &str) -> Result<Option<u64>, NodeError> {
        self.share(key, value, ttl).await
    }

    async fn try_lock_many(
        &self,
        keys: &[String],
        value: &str,
        ttl: Duration,
        holder: &str,
    ) -> Result<Option<Vec<u64>>, NodeError> {
        self.lock_many(keys, value, ttl, holder).await
    }

    async fn agree_permits(
        &self,
        permits_key: &str,
        slots: &[String],
        n: u32,
        ttl: Duration,
    ) -> Result<Agreement, NodeError> {
        self.agree(permits_key, slots, n, ttl).await
    }

    async fn hand_off(&self, key: &str, old: &str, new: &str, ttl: Duration, holder: &str) -> Result<Swap, NodeError> {
        let args = vec![
            old.into(),
            new.into(),
            ttl_arg(ttl),
            self.waiter_tag.clone(),
            holder.into(),
        ];
        if let Some(variants) = self.batches.first.proof.in_use() {
            let (fence, marker) = (keys::of_bucket(key, "fence"), keys::of_bucket(key, "verified"));
            let waiting = self.waiting_key(key);
            let call = || {
                (
                    vec![key, fence.as_str(), marker.as_str(), waiting.as_str()],
                    args.clone(),
                )
            };
            let timing = self.timing();
            let answer = eval_if_loaded(&self.client, &variants.hand_off, call).await;
            timing.answered(answer.is_ok());
            match answer? {
                Some(reply) => return replies::hand_off(reply),
                // Not this daemon's verified process: as in `Batches::call`.
                None => {
                    self.batches.first.proof.withdraw();
                    self.probe_wanted.notify_one();
                }
            }
        }
        replies::hand_off(self.eval(&self.hand_off, key, args).await?)
    }

    async fn publish_fence(&self, key: &str, value: &str, counter: u64) -> Result<bool, NodeError> {
        if Mode::of(value) == Mode::Shared {
            return self.publish_shared_fence(key, value, counter).await;
        }
        let args = vec![value.into(), Value::from(counter.to_string())];
        replies::flag(self.eval(&self.publish_fence, key, args).await?)
    }

    async fn extend(&self, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
        let one_slot = |group: Vec<_>| async move { self.extend_in_one_slot(&group).await };
        super::cluster::by_slot(locks, self.clustered(), Order::AtOnce, |lock| lock.key, one_slot).await
    }

    async fn unlock(&self, key: &str, value: &str, announce: Announce) -> Result<bool, NodeError> {
        if Mode::of(value) == Mode::Shared {
            return self.unlock_shared(key, value, announce).await;
        }
        let when = match announce {
            Announce::No => "",
            Announce::IfWaited => "waited",
            Announce::Always => "always",
        };
        let args = [
            Value::from_static_str("U"),
            Value::from(value),
            Value::from_static_str(when),
            Value::from_static_str(""),
        ];
        // Timed by the batches, to its answer (`Batches::release_answered`).
        let answer = self.batches.of(key).request(key, args).await;
        answer.and_then(replies::released)
    }

    async fn inspect(&self, key: &str) -> Result<KeyView, NodeError> {
        let (readers, permits) = (self.readers_key(key), self.permits_key_for(key));
        let fence = keys::of_bucket(key, "fence");
        let keys = vec![key, fence.as_str(), readers.as_str(), permits.as_str()];
        replies::inspect(self.eval_observed(&self.inspect, keys, Vec::new()).await?)
    }

    async fn views(&self, keys: &[String]) -> Result<Vec<KeyView>, NodeError> {
        let one_slot = |group: Vec<_>| async move {
            let all = group.iter().map(|k: &&String| k.as_str()).collect();
            listing::views(self.eval_observed(&self.views, all, Vec::new()).await?, group.len())
        };
        let keys: Vec<&String> = keys.iter().collect();
        super::cluster::by_slot(&keys, self.clustered(), Order::AtOnce, |k| k.as_str(), one_slot).await
    }

    async fn scan(&self, start: &str, cursor: u64, count: u32) -> Result<(u64, Vec<String>), NodeError> {
        let pattern = format!("{}:{{*}}:{}*", glob_escaped(&self.prefix), glob_escaped(start));
        let (cursor, keys) = if self.clustered() {
            self.scan_cluster_step(pattern, cursor, count).await?
        } else {
            let scan = self
                .client
                .scan_page::<Value, _, _>(cursor.to_string(), pattern, Some(count), None);
            listing::scan(Box::pin(scan).await.map_err(node_error)?)?
        };
        // `*` also matches past a `}`: keep the names that truly start so.
        let names = (keys.iter())
            .filter_map(|key| crate::redlock::buckets::split(key))
            .filter(|(start_, name)| start_.starts_with(&self.prefix) && name.starts_with(start))
            .map(|(_, name)| name.to_owned())
            .collect();
        Ok((cursor, names))
    }

    async fn force_unlock(&self, key: &str) -> Result<bool, NodeError> {
        replies::flag(
            self.eval(
                &self.force_release,
                key,
                vec![Value::from(released_channel(key)), self.publish_command()],
            )
            .await?,
        )
    }

    async fn write_record(
        &self,
        key: &str,
        record_key: &str,
        value: &str,
        record: &[u8],
        ttl: Duration,
    ) -> Result<bool, NodeError> {
        self.write_election_record(key, record_key, value, record, ttl).await
    }

    async fn read_record(&self, key: &str, record_key: &str) -> Result<RecordView, NodeError> {
        self.read_election_record(key, record_key).await
    }
}
