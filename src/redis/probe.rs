//! How the monitor looks at a master (docs/design.md#quarantine): one probe
//! reads its role, eviction policy, identity, uptime, clock and marker and
//! (re)loads the scripts; repair raises its fence counter and marks it
//! verified. All on the node's probe connection, apart from lock traffic.

use std::sync::atomic::Ordering;

use fred::prelude::{ClientLike, KeysInterface, LuaInterface, Value};
use fred::types::{ClusterHash, CustomCommand};
use tokio::time::Instant;

use super::node::{RedisNode, eval_script, node_error};
use super::replies;
use crate::redlock::node::{NodeError, Probed};
use crate::redlock::standing::{NodeHealth, Observation};

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
            ];
            for script in scripts {
                if let Err(e) = self.probe_client.script_load::<String, _>(script.lua).await {
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
