//! How the monitor looks at a position served by a Redis Cluster
//! (docs/design.md#cluster-positions): every primary is probed (role,
//! eviction policy, identity, uptime, marker) and the observation names
//! each primary with its slots, so a primary that restarted, failed over or
//! lost its data holds out its own buckets until they are repaired.
//! Repair writes each bucket's counter and marker on the primary that owns
//! its slot, with that primary's identity.

use fred::prelude::{ClientLike, ClusterInterface, KeysInterface, LuaInterface, Value};
use fred::types::config::Server;
use fred::types::{ClusterHash, CustomCommand};
use tokio::time::Instant;

use super::conn::failed as node_error;
use super::node::RedisNode;
use super::probing::Shard;
use super::scripts::SCRIPTS;
use super::{keys, replies};
use crate::redlock::buckets::BUCKETS;
use crate::redlock::limit::{TimedOut, within};
use crate::redlock::node::NodeError;
use crate::redlock::standing::{Observation, ScriptRefused, ShardSeen};

/// Buckets read or repaired by one script on one primary.
const CHUNK: usize = 1024;

/// The identity a repair names: every primary's `run_id`, then every
/// primary's `master_replid`, in the order of the probe (as `Observation`).
fn joined_identity(shards: &[Shard]) -> String {
    let run_ids: Vec<&str> = (shards.iter())
        .map(|s| s.identity.split(':').next().unwrap_or(""))
        .collect();
    let replids: Vec<&str> = (shards.iter())
        .map(|s| s.identity.split_once(':').map_or("", |(_, r)| r))
        .collect();
    format!("{}:{}", run_ids.join(","), replids.join(","))
}

/// What `look_at_primary` saw.
struct Looked {
    shard: Shard,
    info: replies::Info,
    maxmemory_policy: String,
    marker: Option<String>,
    /// The node's clock (µs), when it was sampled, and the uncertainty.
    time: Option<(u64, Instant, std::time::Duration)>,
}

impl RedisNode {
    /// The observation of a cluster: every primary probed, each one a
    /// `ShardSeen`; the identity joins theirs (ordered by first slot), the
    /// marker is the identity only when every primary's buckets name it.
    pub(super) async fn probe_cluster(&self) -> Result<Observation, NodeError> {
        self.sync_slot_map(&self.probing.client).await?;
        // Lock traffic follows the slot map the probe sees (fred also
        // re-reads it on MOVED, but not while a dead primary is retried).
        self.sync_slot_map(&self.conn.client).await?;
        let state = (self.probing.client.cached_cluster_state())
            .ok_or_else(|| NodeError::Failed("no cluster slot map".into()))?;
        let mut primaries: Vec<(Server, Vec<(u16, u16)>)> = Vec::new();
        let mut covered = 0usize;
        for range in state.slots() {
            covered += usize::from(range.end - range.start) + 1;
            match primaries.iter_mut().find(|(s, _)| *s == range.primary) {
                Some((_, ranges)) => ranges.push((range.start, range.end)),
                None => primaries.push((range.primary.clone(), vec![(range.start, range.end)])),
            }
        }
        if covered != usize::from(BUCKETS) {
            return Err(NodeError::Failed(format!(
                "the cluster serves {covered} of {BUCKETS} slots"
            )));
        }
        for (_, ranges) in &mut primaries {
            ranges.sort_unstable();
        }
        primaries.sort_by_key(|(_, ranges)| ranges[0].0);
        // Every primary at once (a probe is bounded by the command timeout,
        // and a cluster's primaries are several round trips each).
        let looks = primaries
            .into_iter()
            .enumerate()
            .map(|(i, (server, ranges))| self.look_at_primary(server, ranges, i == 0));
        let (mut shards, mut infos, mut policy, mut named) = (Vec::new(), Vec::new(), None, Vec::new());
        let mut clock = None;
        for look in futures::future::join_all(looks).await {
            let Looked {
                shard,
                info,
                maxmemory_policy,
                marker,
                time,
            } = look?;
            if maxmemory_policy != "noeviction" || policy.is_none() {
                policy = Some(maxmemory_policy).filter(|p| p != "noeviction").or(policy);
            }
            named.push(marker.as_deref() == Some(shard.identity.as_str()));
            clock = clock.or(time);
            shards.push(shard);
            infos.push(info);
        }
        let (node_time_us, sampled_at, time_uncertainty) =
            clock.ok_or_else(|| NodeError::Failed("no primary".into()))?;
        let joined = |field: fn(&replies::Info) -> &str| infos.iter().map(field).collect::<Vec<_>>().join(",");
        let (run_id, master_replid) = (joined(|i| i.run_id.as_str()), joined(|i| i.master_replid.as_str()));
        let role = (infos.iter().map(|i| i.role.clone()))
            .find(|r| r != "master")
            .unwrap_or_else(|| "master".into());
        // Scripts go in once per connection and whenever a primary is new
        // (a promoted replica starts with none; `NOSCRIPT` reloads too).
        let generation = self.health.generation();
        let (known, same_map) = {
            let last = self.probing.shards.lock().unwrap_or_else(|e| e.into_inner());
            let same = |f: fn(&Shard, &Shard) -> bool| {
                last.len() == shards.len() && last.iter().zip(&shards).all(|(a, b)| f(a, b))
            };
            (
                same(|a, b| a.identity == b.identity),
                same(|a, b| a.server == b.server && a.ranges == b.ranges),
            )
        };
        let mut scripts_loaded = Ok(());
        if !known
            || self
                .probing
                .scripts_generation
                .load(std::sync::atomic::Ordering::SeqCst)
                != generation
        {
            let by_primary = infos.iter().all(|i| i.major_version >= 7);
            scripts_loaded = self.load_scripts_cluster(by_primary).await?;
            if scripts_loaded.is_ok() {
                (self.probing.scripts_generation).store(generation, std::sync::atomic::Ordering::SeqCst);
            }
        }
        *self.probing.shards.lock().unwrap_or_else(|e| e.into_inner()) = shards.clone();
        // A lock request found its bucket unverified (a slot moved, keys
        // deleted), or the slot map changed since the last probe: every
        // bucket's marker must name its primary. (Not on every probe: a
        // read of every bucket costs each primary ~1 ms.)
        let asked = self.bucket_unverified.swap(false, std::sync::atomic::Ordering::SeqCst);
        if asked || !same_map {
            let markers = self.read_buckets_cluster("verified").await?;
            for (shard, named) in shards.iter().zip(&mut named) {
                let buckets = shard.ranges.iter().flat_map(|(a, b)| *a..=*b);
                let names = |b: u16| {
                    let marker = markers[usize::from(b)].as_ref().and_then(Value::as_str);
                    marker.as_deref() == Some(shard.identity.as_str())
                };
                if *named && !buckets.into_iter().all(names) {
                    tracing::warn!(node = %self.name, primary = %shard.server, "a bucket's verified marker is missing or names another primary");
                    *named = false;
                }
            }
        }
        // Sharded pub/sub is Redis 7's: before it, releases go by PUBLISH,
        // which a cluster carries to every node.
        let sharded = infos.iter().all(|i| i.major_version >= 7);
        (self.conn.sharded_publish).store(sharded, std::sync::atomic::Ordering::Relaxed);
        // So is ROUND by primary (a script flagged `allow-cross-slot-keys`):
        // before it, batches go one per slot.
        (self.conn.by_primary).store(sharded, std::sync::atomic::Ordering::Relaxed);
        let marked = named.iter().all(|n| *n);
        self.prove_by_cache_cluster(&shards, &infos, marked).await;
        let seen = (shards.iter().zip(&infos).zip(&named))
            .map(|((shard, info), named)| ShardSeen {
                address: format!("{}:{}", shard.server.host, shard.server.port),
                ranges: shard.ranges.clone(),
                identity: shard.identity.clone(),
                uptime: info.uptime,
                verified: *named,
            })
            .collect();
        let marker = marked.then(|| format!("{run_id}:{master_replid}"));
        Ok(Observation {
            role,
            maxmemory_policy: policy.unwrap_or_else(|| "noeviction".into()),
            uptime: infos.iter().map(|i| i.uptime).min().unwrap_or_default(),
            run_id,
            master_replid,
            node_time_us,
            sampled_at,
            time_uncertainty,
            scripts_loaded,
            marker,
            shards: seen,
        })
    }

    /// Re-reads the slot map on `client`. fred's sync has no timeout of
    /// its own (it waits for its router, which retries a dead cluster for
    /// ever): bounded here by the command timeout, as the probe's other
    /// steps are by fred's (docs/design.md#late-timers).
    async fn sync_slot_map(&self, client: &fred::prelude::Client) -> Result<(), NodeError> {
        match within(self.command_timeout, client.sync_cluster()).await {
            Ok(synced) => synced.map_err(node_error),
            Err(TimedOut) => Err(NodeError::TimedOut),
        }
    }

    /// One primary as the probe sees it: identity, eviction policy, the
    /// marker of its first bucket, and (`clock`) the cluster's clock.
    async fn look_at_primary(&self, server: Server, ranges: Vec<(u16, u16)>, clock: bool) -> Result<Looked, NodeError> {
        let config = CustomCommand::new_static("CONFIG", ClusterHash::FirstKey, false);
        let node = self.probing.client.with_cluster_node(server.clone());
        let info = replies::info(node.info(None).await.map_err(node_error)?)?;
        let got = node.custom(config, vec!["GET", "maxmemory-policy"]).await;
        let maxmemory_policy = replies::config_get(got.map_err(node_error)?, "maxmemory-policy")?;
        let first = keys::bucket_keys(&self.prefix, ranges[0].0);
        let marker = replies::marker(node.get(first[1].as_str()).await.map_err(node_error)?)?;
        let mut time = None;
        if clock {
            let command = CustomCommand::new_static("TIME", ClusterHash::FirstKey, false);
            let before = Instant::now();
            let reply = node.custom(command, Vec::<String>::new()).await.map_err(node_error)?;
            let half_trip = before.elapsed() / 2;
            time = Some((replies::time(reply)?, before + half_trip, half_trip));
        }
        Ok(Looked {
            shard: Shard {
                server,
                ranges,
                identity: format!("{}:{}", info.run_id, info.master_replid),
                major_version: info.major_version,
            },
            info,
            maxmemory_policy,
            marker,
            time,
        })
    }

    /// The cluster's `prove_by_cache` (docs/design.md#process-identity):
    /// once the probe verified every primary (each one's first bucket, and
    /// every bucket after a slot moved, names it; Redis 7 or later), the
    /// cached variants go into each primary by a connection of its own, and
    /// then each primary's `run_id` is read again: one that changed (a
    /// restart in between) has its scripts flushed and the variants stay
    /// unused. A promoted replica, a restarted primary, and a primary
    /// demoted and promoted again since the variants were made answer
    /// `NOSCRIPT` (`proof.rs`).
    async fn prove_by_cache_cluster(&self, shards: &[Shard], infos: &[replies::Info], marked: bool) {
        let proof = &self.conn.proof;
        if !marked || (infos.iter()).any(|i| i.major_version < 7 || i.run_id.is_empty()) {
            proof.withdraw();
            return;
        }
        let identity: Vec<&str> = shards.iter().map(|s| s.identity.as_str()).collect();
        let identity = identity.join(",");
        if proof.holds_for(&identity) {
            return;
        }
        let variants = proof.to_load(&identity);
        for shard in shards {
            let primary = self.probing.client.with_cluster_node(shard.server.clone());
            if let Err(error) = variants.load_into(&primary).await {
                tracing::warn!(node = %self.name, %error, "could not load the cached scripts; keeping the INFO check");
                return;
            }
        }
        for (shard, info) in shards.iter().zip(infos) {
            let primary = self.probing.client.with_cluster_node(shard.server.clone());
            let again = match primary.info(Some(fred::types::InfoKind::Server)).await {
                Ok(reply) => replies::info(reply).map(|i| i.run_id).unwrap_or_default(),
                Err(_) => String::new(),
            };
            if again != info.run_id {
                proof.withdraw();
                let flush = super::proof::script_command(&primary, vec!["FLUSH"]).await;
                tracing::warn!(node = %self.name, flushed = flush.is_ok(), "a primary restarted while the cached scripts were loaded");
                return;
            }
        }
        proof.install(variants);
    }

    /// Every script, loaded into every primary (a promoted replica starts
    /// with none; `NOSCRIPT` also reloads, `conn::eval_script`), ROUND by
    /// primary too where every primary can compile it (`by_primary`): a
    /// `NOSCRIPT` costs a round trip more, which a round that is decided
    /// without this position does not wait for.
    /// A primary that did not answer fails the probe (no verdict on the
    /// scripts: docs/design.md#late-timers); one that refused a script
    /// fails preflight.
    async fn load_scripts_cluster(&self, by_primary: bool) -> Result<Result<(), ScriptRefused>, NodeError> {
        let also = by_primary.then_some(&SCRIPTS.by_primary);
        for script in SCRIPTS.by_sha().into_iter().chain(also) {
            match (self.probing.client)
                .script_load_cluster::<(), _>(script.lua.as_str())
                .await
            {
                Ok(()) => {}
                Err(e) if super::conn::unanswered(&e) => return Err(node_error(e)),
                Err(e) => return Ok(Err(ScriptRefused { reply: e.to_string() })),
            }
        }
        Ok(Ok(()))
    }

    /// Key `what` (`fence`, `verified`) of every bucket, in bucket order:
    /// one script per primary and 1,024 buckets, over the slots the last
    /// probe saw it serve (a slot moved since fails the read; the next
    /// repair tries again).
    pub(super) async fn read_buckets_cluster(&self, what: &str) -> Result<Vec<Option<Value>>, NodeError> {
        let which = usize::from(what == "verified");
        let mut values: Vec<Option<Value>> = vec![None; usize::from(BUCKETS)];
        for (server, buckets, major) in self.work_per_primary()? {
            let lua = SCRIPTS.bulk_get.text_for(major);
            for chunk in buckets.chunks(CHUNK) {
                let mut args = vec![Value::from(lua.as_str()), Value::from(0)];
                args.extend(
                    chunk
                        .iter()
                        .map(|b| Value::from(keys::bucket_keys(&self.prefix, *b)[which].clone())),
                );
                let node = self.probing.client.with_cluster_node(server.clone());
                let eval = CustomCommand::new_static("EVAL", ClusterHash::FirstKey, false);
                let reply = node.custom(eval, args).await.map_err(node_error)?;
                let Value::Array(read) = reply else {
                    return Err(NodeError::Reply(format!("unexpected bulk read reply: {reply:?}")));
                };
                if read.len() != chunk.len() {
                    return Err(NodeError::Reply(format!(
                        "{} values for {} buckets",
                        read.len(),
                        chunk.len()
                    )));
                }
                for (bucket, value) in chunk.iter().zip(read) {
                    values[usize::from(*bucket)] = (!value.is_null()).then_some(value);
                }
            }
        }
        Ok(values)
    }

    /// Raises each listed bucket's counter to its floor and writes its
    /// marker, naming the primary that owns its slot as the last probe saw it
    /// (`identity` must be that probe's: a repair never vouches for a
    /// process no probe looked at). One script per primary and 1,024
    /// buckets.
    pub(super) async fn repair_cluster(&self, floors: &[(u16, Option<u64>)], identity: &str) -> Result<(), NodeError> {
        let shards = self.probing.shards.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if joined_identity(&shards) != identity {
            return Err(NodeError::Failed("the cluster changed since it was probed".into()));
        }
        for shard in &shards {
            let serves = |b: u16| shard.ranges.iter().any(|(a, z)| (*a..=*z).contains(&b));
            let mine: Vec<&(u16, Option<u64>)> = floors.iter().filter(|(b, _)| serves(*b)).collect();
            let lua = SCRIPTS.bulk_repair.text_for(shard.major_version);
            for chunk in mine.chunks(CHUNK) {
                let mut args = vec![
                    Value::from(lua.as_str()),
                    Value::from(0),
                    Value::from(shard.identity.as_str()),
                ];
                for (bucket, floor) in chunk {
                    let [fence, marker] = keys::bucket_keys(&self.prefix, *bucket);
                    args.extend([
                        fence.into(),
                        marker.into(),
                        floor.map(|f| f.to_string()).unwrap_or_default().into(),
                    ]);
                }
                let node = self.probing.client.with_cluster_node(shard.server.clone());
                let eval = CustomCommand::new_static("EVAL", ClusterHash::FirstKey, false);
                node.custom::<Value, _>(eval, args).await.map_err(node_error)?;
            }
        }
        Ok(())
    }

    /// Each primary the last probe saw, with the buckets it serves.
    fn work_per_primary(&self) -> Result<Vec<(Server, Vec<u16>, u32)>, NodeError> {
        let shards = self.probing.shards.lock().unwrap_or_else(|e| e.into_inner());
        if shards.is_empty() {
            return Err(NodeError::Failed("the cluster was not probed yet".into()));
        }
        Ok((shards.iter())
            .map(|s| {
                let buckets = s.ranges.iter().flat_map(|(a, b)| *a..=*b).collect();
                (s.server.clone(), buckets, s.major_version)
            })
            .collect())
    }

    /// One step of a scan of a cluster, primary after primary (in the
    /// order of the last probe): the cursor's top 16 bits name the primary,
    /// the rest is its own cursor (a Redis cursor stays below 2^48).
    pub(super) async fn scan_cluster_step(
        &self,
        pattern: String,
        cursor: u64,
        count: u32,
    ) -> Result<(u64, Vec<String>), NodeError> {
        let servers: Vec<Server> = (self.probing.shards.lock().unwrap_or_else(|e| e.into_inner()).iter())
            .map(|s| s.server.clone())
            .collect();
        let (index, own) = ((cursor >> 48) as usize, cursor & ((1 << 48) - 1));
        let Some(server) = servers.get(index) else {
            return Err(NodeError::Failed("no probed primary to scan".into()));
        };
        let scan = CustomCommand::new_static("SCAN", ClusterHash::FirstKey, false);
        let args = vec![
            own.to_string(),
            "MATCH".into(),
            pattern,
            "COUNT".into(),
            count.to_string(),
        ];
        let node = self.conn.client.with_cluster_node(server.clone());
        let (next, keys) = super::listing::scan(node.custom(scan, args).await.map_err(node_error)?)?;
        let next = match (next, index + 1 < servers.len()) {
            (0, true) => ((index + 1) as u64) << 48,
            (0, false) => 0,
            (own, _) if own >= 1 << 48 => return Err(NodeError::Failed("a cursor beyond 2^48".into())),
            (own, _) => ((index as u64) << 48) | own,
        };
        Ok((next, keys))
    }

    /// The shards' servers, for tests and logs.
    pub fn cluster_primaries(&self) -> Vec<String> {
        let shards = self.probing.shards.lock().unwrap_or_else(|e| e.into_inner());
        shards
            .iter()
            .map(|s| format!("{}:{}", s.server.host, s.server.port))
            .collect()
    }
}
