//! The monitor's half of a master (docs/design.md#quarantine): the
//! connection its probes and repairs go on, what they read as the node's,
//! and, on a cluster, the primaries the last probe saw
//! (docs/design.md#cluster-positions). `probe.rs` and `cluster_probe.rs`
//! use it; the lock side (`node.rs`) reads only the primaries.

use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use fred::prelude::Client;
use fred::types::config::Server;

/// What the monitor keeps of a master.
pub(super) struct Probing {
    /// The monitor's own connection: a probe never queues behind lock
    /// traffic, which under overload would make a healthy master look
    /// unreachable.
    pub(super) client: Client,
    /// The fence counter and verified marker of bucket 0, which the probe
    /// reads as the node's.
    pub(super) sentinel: [String; 2],
    /// The shards the last probe saw, when the position is a cluster.
    pub(super) shards: Mutex<Vec<Shard>>,
    /// The connection generation the scripts were last loaded on.
    pub(super) scripts_generation: AtomicU64,
}

impl Probing {
    /// A master's, on its own connection `client`; the node's keys under
    /// `prefix`.
    pub(super) fn new(client: Client, prefix: &str) -> Probing {
        Probing {
            client,
            sentinel: super::keys::bucket_keys(prefix, 0),
            shards: Mutex::default(),
            scripts_generation: AtomicU64::new(u64::MAX),
        }
    }
}

/// One primary as the last probe saw it.
#[derive(Debug, Clone)]
pub(crate) struct Shard {
    pub(super) server: Server,
    /// The slot ranges it serves (a bucket is a slot).
    pub(super) ranges: Vec<(u16, u16)>,
    /// `run_id:master_replid`.
    pub(super) identity: String,
    /// Its major version (`redis_version`): which scripts it can run.
    pub(super) major_version: u32,
}
