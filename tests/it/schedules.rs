//! Controls on chosen quorums (docs/safety.md#where-each-claim-is-tested): an engine in the test over
//! five real masters, each behind a gate that picks who takes part in each acquisition, runs a schedule
//! that breaks a mechanism when it is switched off, and the checker must catch it; the twin, with the
//! mechanism on, must pass.

use crate::support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fred::prelude::{KeysInterface, LuaInterface};
use redlockd::redis::node::RedisNode;
use redlockd::redlock::node::Probed;
use redlockd::redlock::{ALONE, Acquired, Engine, EngineConfig, Kind};
use support::history::{Grant, History, Kind as Op, Options, Reply, Report, ViolationKind, check};

/// A real master behind a switch: closed, it refuses at once like a dead
/// node, so a test can pick each acquisition's quorum exactly.
/// With `advance_readers`, a shared grant also advances the master's fence
/// counter and answers the advanced value: the unsafe control of
/// docs/design.md#shared-locks ("readers must not advance it").
struct Gate {
    node: RedisNode,
    open: AtomicBool,
    advance_readers: bool,
}

impl redlockd::redlock::Node for Gate {
    fn name(&self) -> &str {
        self.node.name()
    }

    async fn try_lock(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
        holder: &str,
    ) -> Result<Option<u64>, redlockd::redlock::NodeError> {
        self.check()?;
        self.node.try_lock(key, value, ttl, holder).await
    }

    async fn try_share(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
        holder: &str,
    ) -> Result<Option<u64>, redlockd::redlock::NodeError> {
        self.check()?;
        let granted = self.node.try_share(key, value, ttl, holder).await?;
        if granted.is_none() || !self.advance_readers {
            return Ok(granted);
        }
        let (start, _) = redlockd::redlock::buckets::split(key).expect("a bucketed key");
        let advanced: u64 = (self.node.client().incr(format!("{start}fence")).await)
            .map_err(|e| redlockd::redlock::NodeError::Failed(e.to_string()))?;
        Ok(Some(advanced))
    }

    async fn try_lock_set(
        &self,
        keys: &[String],
        value: &str,
        ttl: Duration,
        holder: &str,
    ) -> Result<Option<Vec<u64>>, redlockd::redlock::NodeError> {
        self.check()?;
        self.node.try_lock_set(keys, value, ttl, holder).await
    }

    async fn agree_permits(
        &self,
        permits_key: &str,
        slots: &[String],
        n: u32,
        ttl: Duration,
    ) -> Result<redlockd::redlock::Agreement, redlockd::redlock::NodeError> {
        self.check()?;
        self.node.agree_permits(permits_key, slots, n, ttl).await
    }

    async fn hand_off(
        &self,
        key: &str,
        old: &str,
        new: &str,
        ttl: Duration,
        holder: &str,
    ) -> Result<redlockd::redlock::Swap, redlockd::redlock::NodeError> {
        self.check()?;
        self.node.hand_off(key, old, new, ttl, holder).await
    }

    async fn publish_fence(&self, key: &str, value: &str, counter: u64) -> Result<bool, redlockd::redlock::NodeError> {
        self.check()?;
        self.node.publish_fence(key, value, counter).await
    }

    async fn extend(
        &self,
        locks: &[redlockd::redlock::Extension<'_>],
    ) -> Result<Vec<bool>, redlockd::redlock::NodeError> {
        self.check()?;
        self.node.extend(locks).await
    }

    async fn unlock(
        &self,
        key: &str,
        value: &str,
        announce: redlockd::redlock::Announce,
    ) -> Result<bool, redlockd::redlock::NodeError> {
        self.check()?;
        self.node.unlock(key, value, announce).await
    }

    async fn inspect(&self, key: &str) -> Result<redlockd::redlock::KeyView, redlockd::redlock::NodeError> {
        self.check()?;
        self.node.inspect(key).await
    }

    async fn views(&self, keys: &[String]) -> Result<Vec<redlockd::redlock::KeyView>, redlockd::redlock::NodeError> {
        self.check()?;
        self.node.views(keys).await
    }

    async fn scan(
        &self,
        start: &str,
        cursor: u64,
        count: u32,
    ) -> Result<(u64, Vec<String>), redlockd::redlock::NodeError> {
        self.check()?;
        self.node.scan(start, cursor, count).await
    }

    async fn force_unlock(&self, key: &str) -> Result<bool, redlockd::redlock::NodeError> {
        self.check()?;
        self.node.force_unlock(key).await
    }

    async fn write_record(
        &self,
        key: &str,
        record_key: &str,
        value: &str,
        record: &[u8],
        ttl: Duration,
    ) -> Result<bool, redlockd::redlock::NodeError> {
        self.node.write_record(key, record_key, value, record, ttl).await
    }

    async fn read_record(
        &self,
        key: &str,
        record_key: &str,
    ) -> Result<redlockd::redlock::RecordView, redlockd::redlock::NodeError> {
        self.node.read_record(key, record_key).await
    }
}

impl Gate {
    fn check(&self) -> Result<(), redlockd::redlock::NodeError> {
        if self.open.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err(redlockd::redlock::NodeError::Failed("gate closed".into()))
        }
    }
}

/// An engine over five real masters whose counters start at 0, each behind a gate.
async fn gated_engine(cluster: &support::Cluster, publish_round: bool, advance_readers: bool) -> Engine<Gate> {
    let mut gates = Vec::new();
    for (i, master) in cluster.masters.iter().enumerate() {
        let config = redlockd::app::settings::node(&support::test_config(cluster), &master.url(), None);
        let node = RedisNode::connect(&config).unwrap();
        node.wait_connected(Duration::from_secs(5)).await.unwrap();
        let seen = node.probe().await.unwrap();
        node.repair(&support::keys::every_bucket(), &seen.identity())
            .await
            .unwrap();
        node.health().set(redlockd::redlock::node::Standing::Usable);
        let admin = cluster.admin(i).await;
        for name in ["r", "s"] {
            let _: () = admin
                .set(support::keys::fence(name), 0, None, None, false)
                .await
                .unwrap();
        }
        gates.push(Gate {
            node,
            open: true.into(),
            advance_readers,
        });
    }
    let config = EngineConfig {
        publish_round,
        ..redlockd::app::settings::engine(&support::test_config(cluster))
    };
    Engine::new(gates, config)
}

/// Runs `schedule` (each acquisition's quorum and mode, one after the other, each released before the
/// next), recording each grant, and checks the history.
async fn run(engine: &Engine<Gate>, schedule: &[([usize; 3], Kind)]) -> Report {
    let history = History::new();
    for (quorum, kind) in schedule {
        for (i, gate) in engine.nodes().iter().enumerate() {
            gate.open.store(quorum.contains(&i), Ordering::SeqCst);
        }
        let op = history.invoke("client", "r", Op::Acquire);
        let ttl = Duration::from_secs(5);
        let outcome = engine
            .acquire("r", (*kind, ttl), Duration::ZERO, std::future::pending(), ALONE, "")
            .await;
        let Ok(Acquired::Granted(lease)) = outcome else {
            panic!("the quorum {quorum:?} did not grant: {outcome:?}");
        };
        let grant = Grant {
            token: lease.fencing_token,
            validity: lease.validity,
            value: lease.value.expose().to_owned(),
            shared: *kind == Kind::Shared,
            permits: lease.value.permit().map_or(0, |p| p.of),
            slot: lease.value.permit().map_or(0, |p| p.slot),
        };
        history.complete(op, Reply::Granted(grant));
        let op = history.invoke("client", "r", Op::Release(lease.value.expose().to_owned()));
        let released = engine.release("r", &lease.value).await.unwrap();
        history.complete(op, if released { Reply::Released } else { Reply::Fail });
    }
    let report = check(&history, &[], Options::default());
    println!("{}", report.stats);
    report
}

const A: usize = 0;
const B: usize = 1;
const C: usize = 2;
const D: usize = 3;
const E: usize = 4;

/// The schedule of docs/design.md#the-fencing-token: the per-master maximum alone goes down.
const WRITERS: [([usize; 3], Kind); 5] = [
    ([A, B, C], Kind::Exclusive),
    ([C, D, E], Kind::Exclusive),
    ([A, B, C], Kind::Exclusive),
    ([C, D, E], Kind::Exclusive),
    ([A, B, D], Kind::Exclusive),
];

#[tokio::test]
async fn control_without_round_two_the_adversarial_schedule_makes_a_token_go_down() {
    let cluster = support::Cluster::start(5);
    let report = run(&gated_engine(&cluster, false, false).await, &WRITERS).await;
    assert!(
        report.has(ViolationKind::TokenOrder),
        "the checker missed the decrease:\n{report}"
    );
}

#[tokio::test]
async fn twin_with_round_two_the_adversarial_schedule_keeps_tokens_rising() {
    let cluster = support::Cluster::start(5);
    run(&gated_engine(&cluster, true, false).await, &WRITERS)
        .await
        .assert_safe();
}

/// Two readers on overlapping majorities, then a writer (docs/design.md#shared-locks).
const READERS_THEN_WRITER: [([usize; 3], Kind); 3] = [
    ([A, B, C], Kind::Shared),
    ([C, D, E], Kind::Shared),
    ([A, B, D], Kind::Exclusive),
];

/// Readers that advance the counter (as a plain lock would) and do not publish: C is left one ahead,
/// the writer mints on A, B, D the value C gave the second reader, and is fenced below that read.
#[tokio::test]
async fn control_readers_advancing_the_counter_fence_a_later_write_below_an_earlier_read() {
    let cluster = support::Cluster::start(5);
    let report = run(&gated_engine(&cluster, false, true).await, &READERS_THEN_WRITER).await;
    assert!(
        report.has(ViolationKind::TokenOrder),
        "the checker missed the write below a read:\n{report}"
    );
}

#[tokio::test]
async fn twin_readers_that_read_the_counter_and_publish_it_keep_every_write_above_every_read() {
    let cluster = support::Cluster::start(5);
    run(&gated_engine(&cluster, true, false).await, &READERS_THEN_WRITER)
        .await
        .assert_safe();
}

/// Three permits of two asked on {A,B,C}, {A,B,D}, {C,D,E}, all held at once: no master sees more than
/// two, yet three are out (docs/design.md#semaphores).
const PERMITS_ON: [[usize; 3]; 3] = [[A, B, C], [A, B, D], [C, D, E]];

/// A semaphore that counts permits on each master (a sorted set of holders, at most N of them), granted
/// when a majority counted it in: the design docs/design.md#semaphores rejects. Replies 1 when counted in.
const COUNTING: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + 5000, ARGV[2])
  return 1
end
return 0
";

/// Takes a permit of two on each quorum of `PERMITS_ON` in turn, keeping every one, by counting on each
/// master (`counting`) or through the engine's slots; checks the history.
async fn permits_held_at_once(engine: &Engine<Gate>, counting: bool) -> Report {
    let history = History::new();
    for (i, quorum) in PERMITS_ON.iter().enumerate() {
        for (n, gate) in engine.nodes().iter().enumerate() {
            gate.open.store(quorum.contains(&n), Ordering::SeqCst);
        }
        let op = history.invoke(format!("c{i}"), "s", Op::Acquire);
        let grant = if counting {
            let value = format!("holder-{i}");
            let mut counted = 0;
            for n in quorum {
                let client = engine.nodes()[*n].node.client();
                let keys = vec!["redlockd:counting:s"];
                counted += client
                    .eval::<i64, _, _, _>(COUNTING, keys, vec!["2", &value])
                    .await
                    .unwrap();
            }
            // Tokens of their own, one "slot" each: only the count can be wrong.
            let validity = Duration::from_secs(5);
            (counted >= 3).then(|| Grant {
                token: i as u64 + 1,
                validity,
                value,
                permits: 2,
                slot: i as u32,
                ..Grant::default()
            })
        } else {
            let ttl = Duration::from_secs(5);
            let outcome = (engine.acquire(
                "s",
                (Kind::Permits(2), ttl),
                Duration::ZERO,
                std::future::pending(),
                ALONE,
                "",
            ))
            .await
            .unwrap();
            match outcome {
                Acquired::Granted(lease) => Some(Grant {
                    token: lease.fencing_token,
                    validity: lease.validity,
                    value: lease.value.expose().to_owned(),
                    permits: 2,
                    slot: lease.value.permit().unwrap().slot,
                    ..Grant::default()
                }),
                Acquired::NotGranted { .. } => None,
            }
        };
        history.complete(op, grant.map_or(Reply::Fail, Reply::Granted));
    }
    let report = check(&history, &[], Options::default());
    println!("{}", report.stats);
    report
}

#[tokio::test]
async fn control_permits_counted_on_each_master_let_three_of_two_out() {
    let cluster = support::Cluster::start(5);
    let report = permits_held_at_once(&gated_engine(&cluster, true, false).await, true).await;
    assert_eq!(report.stats.grants, 3, "{report}");
    assert!(
        report.has(ViolationKind::TooManyPermits),
        "the checker missed three permits of two:\n{report}"
    );
}

#[tokio::test]
async fn twin_permits_on_slots_refuse_the_third_of_two_on_the_same_quorums() {
    let cluster = support::Cluster::start(5);
    let report = permits_held_at_once(&gated_engine(&cluster, true, false).await, false).await;
    report.assert_safe();
    assert_eq!((report.stats.grants, report.stats.failed), (2, 1), "{report}");
}
