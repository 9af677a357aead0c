//! Exclusive locks on one master (docs/design.md#the-lock-on-one-master):
//! round 1 and releases travel in ROUND batches (`batch.rs`; here the
//! arguments of each request), the rest is one script call each — the
//! hand-off, round 2, extensions (a batch per call) and force release.

use std::time::Duration;

use fred::prelude::Value;

use super::cluster::Lanes;
use super::conn::{Conn, release_kind, ttl_arg};
use super::replies::{self, Locked};
use super::scripts::{SCRIPTS, released_channel};
use crate::redlock::node::{Announce, Extension, NodeError, Swap};

/// `Node::try_lock`'s round 1 on lock `key`, in its lane's next ROUND
/// batch: `L`, the value, the TTL, who holds it.
pub(super) async fn lock(
    lanes: &Lanes,
    conn: &Conn,
    key: &str,
    value: &str,
    ttl: Duration,
    holder: &str,
) -> Result<Locked, NodeError> {
    let args = [
        Value::from_static_str("L"),
        Value::from(value),
        ttl_arg(ttl),
        Value::from(holder),
    ];
    let timing = conn.timing();
    let locked = lanes.request(key, args).await.and_then(replies::locked);
    timing.answered(matches!(locked, Ok(Locked::Granted(_) | Locked::Taken)));
    locked
}

/// `Node::unlock` of lock `key`, in its lane's next ROUND batch: the kind
/// that says how it is announced, the value. Timed by the batches, to its
/// answer (`Batches::release_answered`).
pub(super) async fn release(lanes: &Lanes, key: &str, value: &str, announce: Announce) -> Result<bool, NodeError> {
    let args = [
        release_kind(announce),
        Value::from(value),
        Value::from_static_str(""),
        Value::from_static_str(""),
    ];
    lanes.request(key, args).await.and_then(replies::released)
}

/// `Node::hand_off`: HAND_OFF, proved by the script cache while it may be
/// (as ROUND's batches are).
pub(super) async fn hand_off(
    conn: &Conn,
    key: &str,
    old: &str,
    new: &str,
    ttl: Duration,
    holder: &str,
) -> Result<Swap, NodeError> {
    let keys = SCRIPTS.hand_off.keys_of(key);
    let args = vec![
        old.into(),
        new.into(),
        ttl_arg(ttl),
        conn.waiter_tag.clone(),
        holder.into(),
    ];
    let call = || (keys.iter().map(String::as_str).collect(), args.clone());
    let timing = conn.timing();
    let answer = conn.eval_proved(|v| &v.hand_off, &SCRIPTS.hand_off, call).await;
    timing.answered(answer.is_ok());
    replies::hand_off(answer?)
}

/// `Node::publish_fence` (round 2) for an exclusive lock.
pub(super) async fn publish_fence(conn: &Conn, key: &str, value: &str, counter: u64) -> Result<bool, NodeError> {
    let keys = SCRIPTS.publish_fence.keys_of(key);
    let args = vec![value.into(), Value::from(counter.to_string())];
    let keys = keys.iter().map(String::as_str).collect();
    replies::flag(conn.eval(&SCRIPTS.publish_fence, keys, args).await?)
}

/// `Node::extend` for exclusive locks: EXTEND, one call.
pub(super) async fn extend(conn: &Conn, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
    let keys = locks.iter().map(|lock| lock.key).collect();
    let args = (locks.iter())
        .flat_map(|lock| [Value::from(lock.value), ttl_arg(lock.ttl)])
        .collect();
    // The engine's timeout (node_timeout) ends the wait; the command
    // itself runs with fred's defaults (see `conn::eval_script`).
    replies::flags(conn.eval(&SCRIPTS.extend, keys, args).await?, locks.len())
}

/// `Node::force_unlock`: FORCE_RELEASE.
pub(super) async fn force_release(conn: &Conn, key: &str) -> Result<bool, NodeError> {
    let keys = SCRIPTS.force_release.keys_of(key);
    let args = vec![Value::from(released_channel(key)), conn.publish()];
    let keys = keys.iter().map(String::as_str).collect();
    replies::flag(conn.eval(&SCRIPTS.force_release, keys, args).await?)
}
