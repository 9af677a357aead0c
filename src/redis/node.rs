//! The `Node` implementation over one master's connection (`conn.rs`): each
//! operation goes to its lock kind (`exclusive.rs`, `shared.rs`,
//! `permits.rs`, `set.rs`, `election.rs`, `listing.rs`), round-1 requests through the
//! batches (`batch.rs`), and the monitor's probe and repair run on a
//! connection of their own (`probing.rs`, `probe.rs`, `cluster_probe.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::Notify;

use fred::prelude::{Client, ClientLike, EventInterface, KeysInterface, Value};

use super::batch::Batches;
use super::cluster::Lanes;
use super::conn::{Conn, failed, glob_escaped, ttl_arg};
use super::connect::{ConnectError, NotConnected};
use super::probing::Probing;
use super::proof::Proof;
use super::replies::Locked;
use super::{election, exclusive, listing, permits, set, shared};
use crate::redlock::node::{Agreement, Announce, Extension, KeyView, Node, NodeError, RecordView, Swap};
use crate::redlock::observer::Observer;
use crate::redlock::standing::{NodeHealth, Standing};
use crate::redlock::{Mode, Permit};

/// One Redis master (or one cluster position) behind a fred client
/// (auto-pipelined: concurrent requests share the connection).
pub struct RedisNode {
    pub(super) name: String,
    /// Lock traffic.
    pub(super) conn: Arc<Conn>,
    /// The monitor's half: its own connection, and what its probes saw
    /// (`probing.rs`).
    pub(super) probing: Probing,
    /// `redis.key_prefix`.
    pub(super) prefix: String,
    /// A lock request found its bucket unverified: the next probe reads
    /// every bucket's marker.
    pub(super) bucket_unverified: AtomicBool,
    /// Round-1 lock requests and releases on their way, in batches.
    pub(super) batches: Lanes,
    pub(super) health: Arc<NodeHealth>,
    /// `redis.command_timeout`: bounds each step of a probe, fred's
    /// commands by themselves and a cluster's slot-map sync here.
    pub(super) command_timeout: Duration,
}

impl RedisNode {
    /// Creates the client and starts connecting in the background; a node
    /// that is down now keeps being retried with backoff.
    ///
    /// # Errors
    /// When the URL cannot be parsed.
    pub fn connect(config: &super::connect::RedisNodeConfig) -> Result<RedisNode, ConnectError> {
        let (builder, name) = super::connect::builder(config)?;
        let client = builder.build().map_err(ConnectError::Client)?;
        let clustered = client.is_clustered();
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
        // connections invalidate it. Every one asks for a probe. On a
        // cluster a reconnect is to one primary among several: the probe
        // it asks for holds out that primary's buckets if it changed, and
        // until then every grant's script checks the process itself
        // (docs/design.md#cluster-positions).
        let first = AtomicBool::new(true);
        client.on_reconnect(move |_| {
            if !first.swap(false, Ordering::SeqCst) && !clustered {
                h.invalidate();
            }
            c.withdraw();
            p.notify_one();
            async { Ok(()) }
        });
        client.connect();
        let probe_client = builder.build().map_err(ConnectError::Client)?;
        probe_client.connect();
        let conn = Arc::new(Conn {
            client,
            node_timeout: config.node_timeout,
            observer: OnceLock::new(),
            proof,
            probe_wanted,
            sharded_publish: AtomicBool::new(clustered),
            by_primary: AtomicBool::new(false),
            waiter_tag: Value::from(crate::redlock::LockValue::random().expose()),
            writer_wait: ttl_arg(config.writer_wait),
        });
        Ok(RedisNode {
            name,
            batches: Lanes::new(Arc::new(Batches::new(Arc::clone(&conn))), clustered),
            conn,
            probing: Probing::new(probe_client, &config.key_prefix),
            prefix: config.key_prefix.clone(),
            bucket_unverified: AtomicBool::new(false),
            health,
            command_timeout: config.command_timeout,
        })
    }

    /// Records each lock request's latency and errors as master `index`.
    #[must_use]
    pub fn observed(self, observer: Arc<dyn Observer>, index: usize) -> RedisNode {
        let _ = self.conn.observer.set((observer, index));
        self
    }

    /// Waits until the first connection is up (for startup logs and tests).
    ///
    /// # Errors
    /// When the connection failed or did not come up within `limit`.
    pub async fn wait_connected(&self, limit: Duration) -> Result<(), NotConnected> {
        match tokio::time::timeout(limit, self.conn.client.wait_for_connect()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(NotConnected::Failed(e)),
            Err(_) => Err(NotConnected::TimedOut { limit }),
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
        &self.conn.client
    }

    /// Whether this position is a Redis Cluster.
    pub(super) fn clustered(&self) -> bool {
        self.conn.clustered()
    }

    /// A lock answer as `Node::try_lock` reports it: an unverified node
    /// asks for a probe.
    fn counted_grant(&self, locked: Locked) -> Result<Option<u64>, NodeError> {
        let unverified = match locked {
            Locked::Granted(counter) => return Ok(Some(counter)),
            Locked::Taken => return Ok(None),
            Locked::CounterFull => return Err(NodeError::CounterFull),
            Locked::NotVerified => NodeError::NotVerified,
            Locked::Changed => NodeError::Changed,
        };
        // A master is out until the probe looked. On a cluster the refusal
        // is about one primary's buckets (its scripts refuse for the rest
        // of them too): the probe holds out that shard, the others count.
        if !self.clustered() {
            self.health.invalidate();
        }
        self.bucket_unverified.store(true, Ordering::SeqCst);
        self.conn.probe_wanted.notify_one();
        Err(unverified)
    }

    /// `Node::extend` for locks of one slot: each kind in one call of its
    /// script, the answers in the batch's order.
    async fn extend_in_one_slot(&self, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
        let kind = |lock: &Extension<'_>| match (Permit::of(lock.value), Mode::of(lock.value)) {
            (Some(_), _) => 2,
            (None, Mode::Shared) => 1,
            (None, Mode::Exclusive) => 0,
        };
        if locks.iter().all(|lock| kind(lock) == 0) {
            return exclusive::extend(&self.conn, locks).await;
        }
        let mut answers = vec![false; locks.len()];
        for of_kind in 0..3 {
            let at: Vec<usize> = (0..locks.len()).filter(|i| kind(&locks[*i]) == of_kind).collect();
            if at.is_empty() {
                continue;
            }
            let group: Vec<Extension<'_>> = at.iter().map(|i| locks[*i]).collect();
            let flags = match of_kind {
                0 => exclusive::extend(&self.conn, &group).await?,
                1 => shared::extend(&self.conn, &group).await?,
                _ => permits::extend(&self.conn, &group).await?,
            };
            for (i, extended) in at.iter().zip(flags) {
                answers[*i] = extended;
            }
        }
        Ok(answers)
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
        let locked = exclusive::lock(&self.batches, &self.conn, key, value, ttl, holder).await;
        self.counted_grant(locked?)
    }

    async fn try_share(&self, key: &str, value: &str, ttl: Duration, _: &str) -> Result<Option<u64>, NodeError> {
        self.counted_grant(shared::share(&self.conn, key, value, ttl).await?)
    }

    async fn try_lock_set(
        &self,
        keys: &[String],
        value: &str,
        ttl: Duration,
        holder: &str,
    ) -> Result<Option<Vec<u64>>, NodeError> {
        // On a cluster the members of each slot go in one call, slot after
        // slot (docs/design.md#cluster-positions): a slot refused gives back
        // the slots taken before it, so the position holds the whole set or
        // none of it once the call returns.
        let outcome = set::lock(&self.conn, keys, value, ttl, holder).await;
        if self.clustered() && !matches!(outcome, Ok(Ok(_))) {
            for key in keys {
                let _ = Node::unlock(self, key, value, Announce::No).await;
            }
        }
        match outcome? {
            Ok(counters) => Ok(Some(counters)),
            // Never a grant: a refusal, or the node's state.
            Err(refused) => self.counted_grant(refused).map(|_| None),
        }
    }

    async fn agree_permits(
        &self,
        permits_key: &str,
        slots: &[String],
        n: u32,
        ttl: Duration,
    ) -> Result<Agreement, NodeError> {
        permits::agree(&self.conn, permits_key, slots, n, ttl).await
    }

    async fn hand_off(&self, key: &str, old: &str, new: &str, ttl: Duration, holder: &str) -> Result<Swap, NodeError> {
        exclusive::hand_off(&self.conn, key, old, new, ttl, holder).await
    }

    async fn publish_fence(&self, key: &str, value: &str, counter: u64) -> Result<bool, NodeError> {
        if Mode::of(value) == Mode::Shared {
            return shared::publish_fence(&self.conn, key, value, counter).await;
        }
        exclusive::publish_fence(&self.conn, key, value, counter).await
    }

    async fn extend(&self, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
        let one_slot = |group: Vec<_>| async move { self.extend_in_one_slot(&group).await };
        super::cluster::by_slot(locks, self.clustered(), |lock| lock.key, one_slot).await
    }

    async fn unlock(&self, key: &str, value: &str, announce: Announce) -> Result<bool, NodeError> {
        if Mode::of(value) == Mode::Shared {
            return shared::release(&self.conn, key, value, announce).await;
        }
        exclusive::release(&self.batches, key, value, announce).await
    }

    async fn inspect(&self, key: &str) -> Result<KeyView, NodeError> {
        listing::inspect(&self.conn, key).await
    }

    async fn views(&self, keys: &[String]) -> Result<Vec<KeyView>, NodeError> {
        let one_slot = |group: Vec<_>| async move { listing::read(&self.conn, &group).await };
        let keys: Vec<&String> = keys.iter().collect();
        super::cluster::by_slot(&keys, self.clustered(), |k| k.as_str(), one_slot).await
    }

    async fn scan(&self, start: &str, cursor: u64, count: u32) -> Result<(u64, Vec<String>), NodeError> {
        let pattern = format!("{}:{{*}}:{}*", glob_escaped(&self.prefix), glob_escaped(start));
        let (cursor, keys) = if self.clustered() {
            self.scan_cluster_step(pattern, cursor, count).await?
        } else {
            let scan = (self.conn.client).scan_page::<Value, _, _>(cursor.to_string(), pattern, Some(count), None);
            listing::scan(Box::pin(scan).await.map_err(failed)?)?
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
        exclusive::force_release(&self.conn, key).await
    }

    async fn write_record(
        &self,
        key: &str,
        record_key: &str,
        value: &str,
        record: &[u8],
        ttl: Duration,
    ) -> Result<bool, NodeError> {
        election::write_record(&self.conn, key, record_key, value, record, ttl).await
    }

    async fn read_record(&self, key: &str, record_key: &str) -> Result<RecordView, NodeError> {
        election::read_record(&self.conn, key, record_key).await
    }
}
