//! The quorum engine: N `Node`s, the knobs, and the helpers every
//! operation shares. The operations are in `acquire`, `handoff`, `extend`,
//! `release` and `inspect`; every decision they take is in `quorum`.

use std::time::Duration;

use super::Error;
use super::extensions::Extensions;
use super::node::Node;
use super::quorum;

/// The engine's knobs (a subset of the daemon config).
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Keys are `<key_prefix>:{<bucket tag>}:lock:<resource>`.
    pub key_prefix: String,
    /// Bound on each node's answer in a round, far below the TTL, so a slow
    /// or dead node costs at most this.
    pub node_timeout: Duration,
    /// Clock drift allowed per unit of TTL (step 5).
    pub drift_factor: f64,
    /// A grant with less validity than this counts as failed.
    pub min_validity: Duration,
    /// Retry delay after a failed attempt is uniform in `[min, max]`.
    pub retry_delay_min: Duration,
    /// See `retry_delay_min`.
    pub retry_delay_max: Duration,
    /// Names this daemon in the holder record of every lock it grants
    /// (docs/design.md#who-holds-it).
    pub daemon_id: String,
    /// Round 2 of the fencing protocol. Only tests switch it off, to show
    /// that tokens then go backwards.
    #[doc(hidden)]
    pub publish_round: bool,
}

/// The quorum engine over a fixed list of nodes.
pub struct Engine<N> {
    pub(super) nodes: Vec<N>,
    pub(super) config: EngineConfig,
    pub(super) extensions: Extensions,
}

impl<N: Node> Engine<N> {
    /// An engine over `nodes` (odd count, at most 16; config validation
    /// guarantees it for the daemon).
    pub fn new(nodes: Vec<N>, config: EngineConfig) -> Engine<N> {
        assert!(!nodes.is_empty() && nodes.len() <= quorum::MAX_NODES);
        Engine {
            nodes,
            config,
            extensions: Extensions::new(),
        }
    }

    /// The bound on each node's answer in a round.
    pub fn node_timeout(&self) -> Duration {
        self.config.node_timeout
    }

    /// The nodes, in index order (the index is the token's low bits).
    pub fn nodes(&self) -> &[N] {
        &self.nodes
    }

    /// How many nodes make a majority.
    pub fn quorum(&self) -> usize {
        quorum::quorum(self.nodes.len())
    }

    /// The Redis key of a lock: `<key_prefix>:{<tag>}:<name>`, where
    /// `name` is `lock:<resource>`, or `tenant:<t>:lock:<resource>` (see
    /// `auth::scoped`), and the tag names its bucket
    /// (docs/design.md#keys).
    pub fn lock_key(&self, name: &str) -> String {
        super::buckets::key(&self.config.key_prefix, name)
    }

    /// This daemon's name in holder records.
    pub fn daemon_id(&self) -> &str {
        &self.config.daemon_id
    }

    /// The holder record's part this daemon writes for a lock taken by
    /// `owner` of `tenant` (empty without authentication).
    pub fn holder_tag(&self, tenant: &str, owner: &str) -> String {
        super::holder::tag(&self.config.daemon_id, tenant, owner)
    }

    /// `Unavailable` after `reached` nodes answered, without per-node votes.
    pub(super) fn unavailable(&self, reached: usize, detail: String) -> Error {
        Error::Unavailable {
            reached,
            needed: self.quorum(),
            detail,
            votes: Vec::new(),
        }
    }

    /// Counts the nodes that said yes; fails when too few answered at all.
    pub(super) fn tally(&self, answers: &[Option<bool>]) -> Result<usize, Error> {
        quorum::tally(answers)
            .map_err(|reached| self.unavailable(reached, format!("{} gave no answer", answers.len() - reached)))
    }

    /// A uniform random delay in `[0, node_timeout / 10]` after a wake-up.
    pub(super) fn wake_jitter(&self) -> Duration {
        let span = (self.config.node_timeout / 10).as_micros() as u64;
        Duration::from_micros(fastrand::u64(0..=span))
    }

    /// A uniform random delay in `[retry_delay_min, retry_delay_max]`, so
    /// contending clients do not retry in lock-step.
    pub(super) fn retry_delay(&self) -> Duration {
        let (lo, hi) = (self.config.retry_delay_min, self.config.retry_delay_max);
        let span = hi.saturating_sub(lo).as_micros() as u64;
        lo + Duration::from_micros(fastrand::u64(0..=span))
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
pub(crate) mod tests;
