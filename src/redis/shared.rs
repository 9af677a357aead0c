//! Shared locks on one master (docs/design.md#shared-locks): the scripts
//! and the calls for readers. While readers hold a lock, its key holds
//! `SHARED_MARK` (so an exclusive `SET NX` fails as against any holder)
//! until the last reader's deadline, and the readers are a sorted set
//! `<prefix>:readers:<name>` of values scored by their deadlines on the
//! master's clock (ms). Values of shared locks start with `r`
//! (`Mode::of`): `RedisNode` sends them here. The scripts are
//! `lua/share.lua`, `shared_extend.lua`, `shared_release.lua` and
//! `shared_fence.lua`.

use std::time::Duration;

use fred::prelude::Value;

use super::conn::{Conn, announcement, eval_script, ttl_arg};
use super::replies::{self, Locked};
use super::scripts::{SCRIPTS, released_channel};
use crate::redlock::node::{Announce, Extension, NodeError};

/// `Node::try_share`: SHARE's answer, as ROUND's for a lock.
pub(super) async fn share(conn: &Conn, key: &str, value: &str, ttl: Duration) -> Result<Locked, NodeError> {
    let keys = SCRIPTS.share.keys_of(key);
    let args = vec![Value::from(value), ttl_arg(ttl), conn.waiter_tag.clone()];
    let reply = conn
        .eval(&SCRIPTS.share, keys.iter().map(String::as_str).collect(), args)
        .await?;
    match reply {
        Value::Integer(n) => replies::locked(n),
        other => Err(NodeError::Reply(format!(
            "unexpected share reply {}",
            replies::describe(&other)
        ))),
    }
}

/// `Node::publish_fence` for a reader.
pub(super) async fn publish_fence(conn: &Conn, key: &str, value: &str, counter: u64) -> Result<bool, NodeError> {
    let keys = SCRIPTS.shared_fence.keys_of(key);
    let args = vec![value.into(), Value::from(counter.to_string())];
    let keys = keys.iter().map(String::as_str).collect();
    replies::flag(conn.eval(&SCRIPTS.shared_fence, keys, args).await?)
}

/// `Node::extend` for readers, one call.
pub(super) async fn extend(conn: &Conn, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
    let script = &SCRIPTS.shared_extend;
    let keys: Vec<Vec<String>> = locks.iter().map(|lock| script.keys_of(lock.key)).collect();
    let args = (locks.iter())
        .flat_map(|lock| [Value::from(lock.value), ttl_arg(lock.ttl)])
        .collect();
    let reply = conn
        .eval(script, keys.iter().flatten().map(String::as_str).collect(), args)
        .await?;
    replies::flags(reply, locks.len())
}

/// `Node::unlock` for a reader: carried out in a task of its own, so it
/// lands even when the caller stops waiting (as `Node::unlock` requires).
pub(super) async fn release(conn: &Conn, key: &str, value: &str, announce: Announce) -> Result<bool, NodeError> {
    let keys = SCRIPTS.shared_release.keys_of(key);
    let args = vec![
        Value::from(value),
        announcement(announce),
        Value::from(released_channel(key)),
        conn.publish(),
    ];
    let client = conn.client.clone();
    let release = tokio::spawn(async move {
        let call = || (keys.iter().map(String::as_str).collect(), args.clone());
        eval_script(&client, &SCRIPTS.shared_release, call).await
    });
    let reply = release
        .await
        .unwrap_or_else(|e| Err(NodeError::Failed(format!("the release task failed: {e}"))))?;
    replies::flag(reply)
}
