//! How the monitor looks at a master (docs/design.md#quarantine): one probe
//! reads its role, eviction policy, identity, uptime, clock and marker and
//! (re)loads the scripts; repair raises its fence counter and marks it
//! verified. All on the node's probe connection, apart from lock traffic.

use std::sync::atomic::Ordering;

use fred::prelude::{ClientLike, KeysInterface, LuaInterface, Value};
use fred::types::{ClusterHash, CustomCommand};
use tokio::time::Instant;

use super::conn::{eval_script, failed as node_error, unanswered};
use super::keys;
use super::node::RedisNode;
use super::replies;
use super::scripts::SCRIPTS;
use crate::redlock::buckets::BUCKETS;
use crate::redlock::node::{NodeError, Probed};
use crate::redlock::standing::{NodeHealth, Observation, ScriptRefused};

impl RedisNode {
    /// Loads the cached ROUND and HAND_OFF (`proof::Proof::to_load`) into
    /// the master's process when this daemon verified it
    /// (docs/design.md#process-identity): Redis 7 or later, and the marker
    /// names the running process (the condition ROUND's `INFO` check grants
    /// on). A second `INFO` confirms the scripts went into that same
    /// process; should it have restarted in between, the new process's
    /// scripts are flushed. Otherwise the batches keep the `INFO` check.
    async fn prove_by_cache(&self, info: &replies::Info, marker: Option<&str>) {
        let proof = &self.conn.proof;
        let verified = info.major_version >= 7
            && !info.run_id.is_empty()
            && marker
                .and_then(|m| m.strip_prefix(info.run_id.as_str()))
                .is_some_and(|rest| rest.starts_with(':'));
        if !verified {
            proof.withdraw();
            return;
        }
        if proof.holds_for(&info.run_id) {
            return;
        }
        let variants = proof.to_load(&info.run_id);
        if let Err(error) = variants.load_into(&self.probing.client).await {
            tracing::warn!(node = %self.name, %error, "could not load the cached scripts; keeping the INFO check");
            return;
        }
        let again = match self.probing.client.info(Some(fred::types::InfoKind::Server)).await {
            Ok(reply) => replies::info(reply).map(|i| i.run_id).unwrap_or_default(),
            Err(_) => String::new(),
        };
        if again == info.run_id {
            proof.install(variants);
        } else {
            // Another process took the scripts: it must not keep them.
            proof.withdraw();
            let flush = self.probing.client.script_flush(false).await;
            tracing::warn!(node = %self.name, flushed = flush.is_ok(), "the master restarted while the cached scripts were loaded");
        }
    }
}

impl Probed for RedisNode {
    /// The node's standing, as the monitor last decided it.
    fn health(&self) -> &NodeHealth {
        &self.health
    }

    /// Resolves when something (a reconnect, an unverified reply) asks for
    /// a probe sooner than the next tick.
    async fn probe_wanted(&self) {
        self.conn.probe_wanted.notified().await;
    }

    /// Looks at the node: role, eviction policy, identity, uptime, clock,
    /// marker, and (re)loads the scripts.
    ///
    /// # Errors
    /// When the node does not answer.
    async fn probe(&self) -> Result<Observation, NodeError> {
        if self.clustered() {
            return self.probe_cluster().await;
        }
        let info = replies::info(self.probing.client.info(None).await.map_err(node_error)?)?;
        let config = CustomCommand::new_static("CONFIG", ClusterHash::FirstKey, false);
        let policy = self
            .probing
            .client
            .custom(config, vec!["GET", "maxmemory-policy"])
            .await
            .map_err(node_error)?;
        let maxmemory_policy = replies::config_get(policy, "maxmemory-policy")?;
        // Once per connection (docs/design.md#the-lock-on-one-master); NOSCRIPT reloads cover the rest.
        let generation = self.health.generation();
        let mut scripts_loaded = Ok(());
        if self.probing.scripts_generation.load(Ordering::SeqCst) != generation {
            for script in SCRIPTS.by_sha() {
                match self.probing.client.script_load::<String, _>(script.lua.as_str()).await {
                    Ok(_) => {}
                    // No answer is no verdict on the scripts: the probe failed.
                    Err(e) if unanswered(&e) => return Err(node_error(e)),
                    Err(e) => scripts_loaded = Err(ScriptRefused { reply: e.to_string() }),
                }
            }
            if scripts_loaded.is_ok() {
                self.probing.scripts_generation.store(generation, Ordering::SeqCst);
            }
        }
        let mut marker = replies::marker(
            self.probing
                .client
                .get(self.probing.sentinel[1].as_str())
                .await
                .map_err(node_error)?,
        )?;
        // A lock request found its bucket unverified: should any bucket's
        // marker differ from bucket 0's, the node's data is not vouched for.
        if marker.is_some() && self.bucket_unverified.swap(false, Ordering::SeqCst) {
            let markers = self.read_buckets("verified").await?;
            let whole = (markers.iter()).all(|m| m.as_ref().and_then(Value::as_str).as_deref() == marker.as_deref());
            if !whole {
                tracing::warn!(node = %self.name, "a bucket's verified marker is missing or names another process");
                marker = None;
            }
        }
        self.prove_by_cache(&info, marker.as_deref()).await;
        let before = Instant::now();
        let time = CustomCommand::new_static("TIME", ClusterHash::FirstKey, false);
        let time = self
            .probing
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
            shards: Vec::new(),
        })
    }

    /// Every bucket's fence counter, each at least the node's counter of
    /// the layout before buckets (docs/design.md#keys).
    ///
    /// # Errors
    /// When the node does not answer.
    async fn read_fences(&self) -> Result<Vec<Option<u64>>, NodeError> {
        let legacy = (self.probing.client.get(keys::legacy_fence(&self.prefix)).await).map_err(node_error)?;
        let legacy = replies::fence(legacy)?;
        let counters = self.read_buckets("fence").await?;
        (counters.into_iter())
            .map(|c| Ok(replies::fence(c.unwrap_or(Value::Null))?.max(legacy)))
            .collect()
    }

    /// Raises each listed bucket's fence counter to at least its floor and
    /// marks the data of process `identity` verified in each.
    ///
    /// # Errors
    /// When the node does not answer.
    async fn repair(&self, floors: &[(u16, Option<u64>)], identity: &str) -> Result<(), NodeError> {
        if self.clustered() {
            return self.repair_cluster(floors, identity).await;
        }
        for chunk in floors.chunks(CHUNK) {
            let keys: Vec<String> = (chunk.iter())
                .flat_map(|(b, _)| keys::bucket_keys(&self.prefix, *b))
                .collect();
            let mut args = vec![Value::from(identity)];
            args.extend((chunk.iter()).map(|(_, floor)| Value::from(floor.map(|f| f.to_string()).unwrap_or_default())));
            let call = || (keys.iter().map(String::as_str).collect(), args.clone());
            eval_script(&self.probing.client, &SCRIPTS.repair, call).await?;
        }
        Ok(())
    }
}

/// Buckets read or repaired in one command.
const CHUNK: usize = 1024;

impl RedisNode {
    /// Key `what` (`fence`, `verified`) of every bucket, in bucket order
    /// (`None` where unset), read `CHUNK` at a time.
    async fn read_buckets(&self, what: &str) -> Result<Vec<Option<Value>>, NodeError> {
        if self.clustered() {
            return self.read_buckets_cluster(what).await;
        }
        let mut values = Vec::with_capacity(usize::from(BUCKETS));
        let which = usize::from(what == "verified");
        for first in (0..BUCKETS).step_by(CHUNK) {
            let keys: Vec<String> = (first..(first + CHUNK as u16).min(BUCKETS))
                .map(|b| keys::bucket_keys(&self.prefix, b)[which].clone())
                .collect();
            let count = keys.len();
            match self.probing.client.mget(keys).await.map_err(node_error)? {
                Value::Array(read) if read.len() == count => {
                    values.extend(read.into_iter().map(|v| (!v.is_null()).then_some(v)));
                }
                // One key: fred may answer with the value itself.
                one if count == 1 => values.push((!one.is_null()).then_some(one)),
                other => return Err(NodeError::Reply(format!("unexpected MGET reply: {other:?}"))),
            }
        }
        Ok(values)
    }
}
