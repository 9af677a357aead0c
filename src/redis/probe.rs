//! How the monitor looks at a master (docs/design.md#quarantine): one probe
//! reads its role, eviction policy, identity, uptime, clock and marker and
//! (re)loads the scripts; repair raises its fence counter and marks it
//! verified. All on the node's probe connection, apart from lock traffic.

use std::sync::atomic::Ordering;

use fred::prelude::{ClientLike, KeysInterface, LuaInterface, Value};
use fred::types::{ClusterHash, CustomCommand};
use tokio::time::Instant;

use super::eval::{eval_script, node_error};
use super::node::RedisNode;
use super::replies;
use crate::redlock::node::{NodeError, Probed};
use crate::redlock::standing::{NodeHealth, Observation};

impl RedisNode {
    /// Loads this daemon's cached ROUND and HAND_OFF into the master's
    /// process when this daemon verified it (docs/design.md#process-identity):
    /// Redis 7 or later, and the marker names the running process (the
    /// condition ROUND's `INFO` check grants on). A second `INFO` confirms
    /// the scripts went into that same process; should it have restarted in
    /// between, the new process's scripts are flushed. Otherwise the
    /// batches keep the `INFO` check.
    async fn prove_by_cache(&self, info: &replies::Info, marker: Option<&str>) {
        let ok = &self.batches.cached_ok;
        let verified = info.major_version >= 7
            && !info.run_id.is_empty()
            && marker
                .and_then(|m| m.strip_prefix(info.run_id.as_str()))
                .is_some_and(|rest| rest.starts_with(':'));
        if !verified {
            ok.store(false, Ordering::SeqCst);
            return;
        }
        let loaded_here =
            self.cached_for.lock().unwrap_or_else(|e| e.into_inner()).as_deref() == Some(info.run_id.as_str());
        if ok.load(Ordering::SeqCst) && loaded_here {
            return;
        }
        for script in [&self.batches.cached, &self.hand_off_cached] {
            if let Err(error) = self.probe_client.script_load::<String, _>(script.lua.as_str()).await {
                tracing::warn!(node = %self.name, %error, "could not load the cached scripts; keeping the INFO check");
                return;
            }
        }
        let again = match self.probe_client.info(Some(fred::types::InfoKind::Server)).await {
            Ok(reply) => replies::info(reply).map(|i| i.run_id).unwrap_or_default(),
            Err(_) => String::new(),
        };
        if again == info.run_id {
            *self.cached_for.lock().unwrap_or_else(|e| e.into_inner()) = Some(again);
            ok.store(true, Ordering::SeqCst);
        } else {
            // Another process took the scripts: it must not keep them.
            ok.store(false, Ordering::SeqCst);
            let flush = self.probe_client.script_flush(false).await;
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
        self.probe_wanted.notified().await;
    }

    /// Looks at the node: role, eviction policy, identity, uptime, clock,
    /// marker, and (re)loads the scripts.
    ///
    /// # Errors
    /// When the node does not answer.
    async fn probe(&self) -> Result<Observation, NodeError> {
        let info = replies::info(self.probe_client.info(None).await.map_err(node_error)?)?;
        let config = CustomCommand::new_static("CONFIG", ClusterHash::FirstKey, false);
        let policy = self
            .probe_client
            .custom(config, vec!["GET", "maxmemory-policy"])
            .await
            .map_err(node_error)?;
        let maxmemory_policy = replies::config_get(policy, "maxmemory-policy")?;
        // Once per connection (docs/design.md#the-lock-on-one-master); NOSCRIPT reloads cover the rest.
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
                &self.views,
                &self.force_release,
                &self.many,
            ];
            for script in scripts.into_iter().chain(self.shared.all()).chain(self.permits.all()) {
                if let Err(e) = self.probe_client.script_load::<String, _>(script.lua.as_str()).await {
                    scripts_loaded = Err(e.to_string());
                }
            }
            if scripts_loaded.is_ok() {
                self.scripts_generation.store(generation, Ordering::SeqCst);
            }
        }
        let marker = replies::marker(
            self.probe_client
                .get(self.marker_key.as_str())
                .await
                .map_err(node_error)?,
        )?;
        self.prove_by_cache(&info, marker.as_deref()).await;
        let before = Instant::now();
        let time = CustomCommand::new_static("TIME", ClusterHash::FirstKey, false);
        let time = self
            .probe_client
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
    async fn read_fence(&self) -> Result<Option<u64>, NodeError> {
        replies::fence(
            self.probe_client
                .get(self.fence_key.as_str())
                .await
                .map_err(node_error)?,
        )
    }

    /// Raises the fence counter to at least `floor` and marks the data of
    /// process `identity` verified (the last step before a node rejoins).
    ///
    /// # Errors
    /// When the node does not answer.
    async fn repair(&self, floor: Option<u64>, identity: &str) -> Result<(), NodeError> {
        let floor = floor.map(|f| f.to_string()).unwrap_or_default();
        let call = || {
            let keys = vec![self.fence_key.as_str(), self.marker_key.as_str()];
            (keys, vec![Value::from(floor.as_str()), Value::from(identity)])
        };
        eval_script(&self.probe_client, &self.repair, call).await.map(drop)
    }
}
