//! What Listing and Inspect ask of a master: `VIEWS` (the lock key, with
//! its holder record, and its time left per lock), `INSPECT` and `SCAN`;
//! their replies are read by pure functions, like `replies.rs`.

use fred::prelude::Value;

use super::conn::Conn;
use super::replies::{self, describe, view};
use super::scripts::SCRIPTS;
use crate::redlock::node::{KeyView, NodeError};

/// `Node::inspect`: INSPECT on lock `key`.
pub(super) async fn inspect(conn: &Conn, key: &str) -> Result<KeyView, NodeError> {
    let keys = SCRIPTS.inspect.keys_of(key);
    let reply = conn
        .eval(&SCRIPTS.inspect, keys.iter().map(String::as_str).collect(), Vec::new())
        .await?;
    replies::inspect(reply)
}

/// `Node::views` for keys of one slot: VIEWS, one call.
pub(super) async fn read(conn: &Conn, keys: &[&String]) -> Result<Vec<KeyView>, NodeError> {
    let all = keys.iter().map(|k| k.as_str()).collect();
    views(conn.eval(&SCRIPTS.views, all, Vec::new()).await?, keys.len())
}

/// `VIEWS` for `count` locks: the lock key and its PTTL, for each.
///
/// # Errors
/// Any other shape.
pub(super) fn views(reply: Value, count: usize) -> Result<Vec<KeyView>, NodeError> {
    let parts = match reply {
        Value::Array(parts) if parts.len() == 2 * count => parts,
        other => {
            return Err(NodeError::Reply(format!(
                "unexpected views reply: {} (expected {} elements)",
                describe(&other),
                2 * count
            )));
        }
    };
    let mut parts = parts.into_iter();
    let mut views = Vec::with_capacity(count);
    while let (Some(held), Some(pttl)) = (parts.next(), parts.next()) {
        views.push(view(held, pttl, "views reply")?);
    }
    Ok(views)
}

/// `SCAN`: the next cursor and the keys.
///
/// # Errors
/// Any other shape.
pub(super) fn scan(reply: Value) -> Result<(u64, Vec<String>), NodeError> {
    let bad = |what: &str| NodeError::Reply(format!("unexpected scan reply: {what}"));
    let Value::Array(parts) = reply else {
        return Err(bad("not an array"));
    };
    let [cursor, keys] = <[Value; 2]>::try_from(parts).map_err(|_| bad("not a cursor and keys"))?;
    let cursor = cursor
        .as_str()
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| bad("the cursor is not a number"))?;
    let Value::Array(keys) = keys else {
        return Err(bad("the keys are not an array"));
    };
    let keys = keys
        .into_iter()
        .map(|key| key.into_string().ok_or_else(|| bad("a key is not text")))
        .collect::<Result<_, _>>()?;
    Ok((cursor, keys))
}

#[cfg(test)]
#[path = "listing_tests.rs"]
mod tests;
