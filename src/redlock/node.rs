//! The `Node` trait: the one seam between the quorum engine and a lock store.
//! `src/redis/node.rs` implements it over fred; `fake.rs` in memory for engine tests.
//! Each method is one atomic step on one master (docs/design.md#the-lock-on-one-master).

use std::future::Future;
use std::time::Duration;

pub use super::standing::Standing;
use super::standing::{NodeHealth, Observation};

/// Why a node could not answer. Any of these counts as "no vote" in a round;
/// none of them means "not held" (a node we could not reach may hold it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeError {
    /// The node could not be reached, or answered with an error.
    #[error("{0}")]
    Failed(String),
    /// The node did not answer a command within the command timeout
    /// (`redis.command_timeout`, counted in the time the daemon could run:
    /// docs/design.md#late-timers).
    #[error("no answer within the command timeout")]
    TimedOut,
    /// The node answered what the request cannot be answered with (the
    /// message names what was expected).
    #[error("{0}")]
    Reply(String),
    /// The node was not verified since its data was lost or it started
    /// (docs/design.md#quarantine): nothing granted.
    #[error("node not verified since its data was lost or it started")]
    NotVerified,
    /// The node restarted or failed over since it was verified
    /// (docs/design.md#process-identity): nothing granted.
    #[error("node restarted or failed over since it was verified")]
    Changed,
    /// The fence counter would reach 2^53
    /// (docs/design.md#the-lock-on-one-master keeps it below): nothing granted.
    #[error("the fence counter would reach 2^53; nothing granted")]
    CounterFull,
}

impl NodeError {
    /// The node is not the process whose data a daemon verified.
    #[must_use]
    pub fn is_unverified(&self) -> bool {
        matches!(self, NodeError::NotVerified | NodeError::Changed)
    }
}

/// What a hand-off did on one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Swap {
    /// The old value held the key (and no longer does).
    pub was_held: bool,
    /// The new fence counter, when the new value now holds the key.
    pub counter: Option<u64>,
    /// A refused attempt marked the lock as waited for since its last
    /// release (`<prefix>:waiting:<name>`): someone may be waiting elsewhere.
    pub waited: bool,
}

/// One lock store. Implementations must make every method atomic on the node
/// and idempotent under re-sends (a client may send a command twice after a
/// reconnect).
pub trait Node: Send + Sync + 'static {
    /// A short name for logs and reports (`host:port`); never a secret.
    fn name(&self) -> &str;

    /// Whether the node may count towards an acquire quorum now
    /// (quarantine, preflight; docs/design.md#quarantine). Extend and release ignore it.
    fn standing(&self) -> Standing {
        Standing::Usable
    }

    /// The standing for lock key `key` (its bucket): on a cluster
    /// position, a shard held out or being repaired keeps its buckets out
    /// while the rest of the position counts (docs/design.md#cluster-positions).
    fn standing_of(&self, key: &str) -> Standing {
        let _ = key;
        self.standing()
    }

    /// Round 1: `SET key value NX PX ttl` and, on success, advance the node's
    /// fence counter by one and return it (or seed it from the node's clock
    /// in microseconds when it is missing). `Ok(None)` when another value
    /// holds the key. "The key already holds `value`" counts as success, so a
    /// re-sent command is harmless. A grant also records `holder` (see
    /// `holder::tag`) with the value, with the counter and the node's clock
    /// (docs/design.md#who-holds-it).
    fn try_lock(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
        holder: &str,
    ) -> impl Future<Output = Result<Option<u64>, NodeError>> + Send;

    /// Round 1 of a shared lock (docs/design.md#shared-locks): add `value`
    /// (a `Mode::Shared` value) to the key's readers until `ttl` from now on
    /// the node's clock, when no exclusive holder has the key and no
    /// exclusive waiter was refused lately; return the node's fence counter
    /// without advancing it (seeded as `try_lock` seeds it). `Ok(None)`
    /// when refused. Already a reader counts as success.
    ///
    /// `publish_fence`, `extend` and `unlock` take shared values too: the
    /// value says its mode (`Mode::of`), and the node acts on the readers.
    /// (A permit's value holds its slot key like an exclusive lock; its
    /// extension also keeps the semaphore's number of permits remembered:
    /// docs/design.md#semaphores.)
    fn try_share(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
        holder: &str,
    ) -> impl Future<Output = Result<Option<u64>, NodeError>> + Send;

    /// Round 1 of a set (docs/design.md#sets): lock
    /// every one of `keys` with `value`, or none, in one step. Each key must
    /// be free or hold `value` already (a re-send); then each takes the next
    /// fence counter value, as `try_lock` does, and the counters come back
    /// in the keys' order. `Ok(None)` when any key is held by another value
    /// (nothing is written but the waiting marks of the held keys).
    fn try_lock_set(
        &self,
        keys: &[String],
        value: &str,
        ttl: Duration,
        holder: &str,
    ) -> impl Future<Output = Result<Option<Vec<u64>>, NodeError>> + Send;

    /// A semaphore's agreement (docs/design.md#semaphores), in one step:
    /// unless `permits_key` remembers another number of permits (returned,
    /// nothing changed), remember `n` there for at least `ttl` more; and
    /// say which of `slots` (the semaphore's slot keys) hold a lock.
    fn agree_permits(
        &self,
        permits_key: &str,
        slots: &[String],
        n: u32,
        ttl: Duration,
    ) -> impl Future<Output = Result<Agreement, NodeError>> + Send;

    /// Hand-off: atomically release `old` and lock `new` for `ttl` (when
    /// `key` holds `old`, is free, or already holds `new`), advancing the
    /// fence counter as `try_lock` does. Returns whether `old` held the key,
    /// the counter when `new` now holds it, and whether a refused attempt
    /// marked the lock as waited for. A node that may have lost data only
    /// releases. A grant records `holder` as `try_lock` does.
    fn hand_off(
        &self,
        key: &str,
        old: &str,
        new: &str,
        ttl: Duration,
        holder: &str,
    ) -> impl Future<Output = Result<Swap, NodeError>> + Send;

    /// Round 2: if `key` still holds `value`, raise the fence counter to at
    /// least `counter` and return `true`; otherwise `false`.
    fn publish_fence(
        &self,
        key: &str,
        value: &str,
        counter: u64,
    ) -> impl Future<Output = Result<bool, NodeError>> + Send;

    /// Compare-and-`PEXPIRE` for each of `locks`, in one atomic step: per
    /// lock, in order, `true` when its key held its value and now lives for
    /// its TTL.
    fn extend(&self, locks: &[Extension<'_>]) -> impl Future<Output = Result<Vec<bool>, NodeError>> + Send;

    /// Compare-and-delete: `true` when `key` held `value` and is now gone.
    /// `announce` says whether the release is published so waiting daemons
    /// wake at once (see `Announce`).
    ///
    /// The delete must be carried out even when the caller stops waiting
    /// for its answer once the future was first polled: `Engine::release`
    /// answers as soon as a quorum decided and drops the rest.
    fn unlock(
        &self,
        key: &str,
        value: &str,
        announce: Announce,
    ) -> impl Future<Output = Result<bool, NodeError>> + Send;

    /// What the node holds for `key` (value, time left, holder record) and
    /// its fence counter, read in one atomic step. For introspection only.
    fn inspect(&self, key: &str) -> impl Future<Output = Result<KeyView, NodeError>> + Send;

    /// What the node holds for each of `keys` (value, time left, holder
    /// record; no fence counter), in one step. For listing only.
    fn views(&self, keys: &[String]) -> impl Future<Output = Result<Vec<KeyView>, NodeError>> + Send;

    /// One step of a scan of the lock keys whose lock name (the key after
    /// its bucket, docs/design.md#keys) starts with `start` (taken
    /// literally): from `cursor` (0 to begin), about `count` keys looked at.
    /// Returns the next cursor (0 when done) and the lock names found. A
    /// key present for the whole scan is found at least once.
    fn scan(
        &self,
        start: &str,
        cursor: u64,
        count: u32,
    ) -> impl Future<Output = Result<(u64, Vec<String>), NodeError>> + Send;

    /// Deletes `key` whatever value it holds (the fence counter is left as
    /// it is) and announces the release. `true`
    /// when it was held.
    fn force_unlock(&self, key: &str) -> impl Future<Output = Result<bool, NodeError>> + Send;

    /// Writes an election's record (docs/design.md#elections) to
    /// `record_key`, expiring after `ttl`, only while lock `key` holds
    /// `value`; the record starts with `value` and a `\n`. Announces it on
    /// the bucket's release channel, so that observers elsewhere look again.
    /// Returns whether it was written.
    fn write_record(
        &self,
        key: &str,
        record_key: &str,
        value: &str,
        record: &[u8],
        ttl: Duration,
    ) -> impl Future<Output = Result<bool, NodeError>> + Send;

    /// Reads lock `key` and the election record at `record_key` together:
    /// the lock's value (without who holds it, or `None` when free), its
    /// grant time (the master's clock, ms), and the record (whole, or
    /// `None`).
    fn read_record(&self, key: &str, record_key: &str) -> impl Future<Output = Result<RecordView, NodeError>> + Send;
}

/// What one master holds of an election: its lock and its record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordView {
    /// The lock's value, when held (exclusive locks only).
    pub value: Option<String>,
    /// When the lock was granted, on the master's clock (ms).
    pub granted_ms: Option<u64>,
    /// The record, starting with the value that wrote it and a `\n`.
    pub record: Option<Vec<u8>>,
}

/// What one node says of a semaphore (`Node::agree_permits`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Agreement {
    /// Another number of permits, remembered there: nothing was changed.
    pub held_with: Option<u32>,
    /// Per slot, whether its key holds a lock.
    pub slots_held: Vec<bool>,
}

/// One lock of an extension batch (`Node::extend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extension<'a> {
    /// The lock key.
    pub key: &'a str,
    /// The value it must hold.
    pub value: &'a str,
    /// Its new time to live.
    pub ttl: Duration,
}

/// One node's view of a lock key.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyView {
    /// The lock value, if held (never leaves the engine).
    pub value: Option<String>,
    /// Time left on the key, if held.
    pub ttl: Option<Duration>,
    /// The node's fence counter.
    pub fence: Option<u64>,
    /// The holder record kept with the value (`counter\ngranted_ms\ndaemon\ntenant\nowner`).
    pub holder: Option<String>,
    /// Shared holders alive now (docs/design.md#shared-locks); 0 for
    /// listing.
    pub readers: u32,
    /// The number of permits remembered for a semaphore of the name
    /// (docs/design.md#semaphores); `None` for listing.
    pub permits: Option<u32>,
}

/// What a lock key holds while shared holders have it (docs/design.md#shared-locks): no
/// value starts with a tab.
pub const SHARED_MARK: &str = "\tshared";

/// Whether a release is published on the release channel (docs/design.md#waiting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announce {
    /// Never: the cleanup of a failed attempt (announcing it would make
    /// waiters skip their retry delay for nothing).
    No,
    /// When some daemon waits for the lock: a refused lock attempt leaves
    /// a mark on the master (`<prefix>:waiting:<name>`), and the release
    /// that finds it publishes and clears it. Nobody waiting, nothing sent.
    IfWaited,
    /// Always: this daemon has waiters of its own for the lock, which may
    /// not have tried yet (and left no mark).
    Always,
}

/// A node the monitor can verify (docs/design.md#quarantine): look at it,
/// read its fence counter, and repair the counter before it rejoins.
pub trait Probed: Node {
    /// Its standing, as the monitor last decided it.
    fn health(&self) -> &NodeHealth;

    /// Resolves when something (a reconnect, an unverified reply) asks for
    /// a probe sooner than the next tick.
    fn probe_wanted(&self) -> impl Future<Output = ()> + Send;

    /// Looks at the node: role, eviction policy, identity, uptime, clock,
    /// marker; (re)loads the scripts.
    fn probe(&self) -> impl Future<Output = Result<Observation, NodeError>> + Send;

    /// The node's fence counters, one per bucket in bucket order
    /// (docs/design.md#keys; `None` where it has none).
    fn read_fences(&self) -> impl Future<Output = Result<Vec<Option<u64>>, NodeError>> + Send;

    /// Raises each listed bucket's fence counter to at least its floor
    /// (`(bucket, floor)`; `None`: not raised) and marks the data of process
    /// `identity` verified in each (the last step before it rejoins).
    fn repair(
        &self,
        floors: &[(u16, Option<u64>)],
        identity: &str,
    ) -> impl Future<Output = Result<(), NodeError>> + Send;
}
