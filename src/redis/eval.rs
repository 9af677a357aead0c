//! Calling a script on a master: by SHA, reloaded on `NOSCRIPT` (or, for
//! the scripts the cache proves, not), and the small conversions every
//! call shares.

use std::time::Duration;

use fred::prelude::{Client, ClientLike, LuaInterface, Value};

use super::scripts::Script;
use crate::redlock::node::NodeError;

/// Runs a script by SHA on `client`, loading it first if the node does not
/// know it.
pub(super) async fn eval_script<'a>(
    client: &Client,
    script: &Script,
    call: impl Fn() -> (Vec<&'a str>, Vec<Value>),
) -> Result<Value, NodeError> {
    // Scripts run with the client's defaults: three attempts (a command
    // whose connection closed unanswered is written again after the
    // reconnection: test
    // `a_release_lost_with_its_connection_is_sent_again_after_the_reconnection`;
    // the scripts are idempotent under re-sends), no fail-fast (commands
    // wait in fred's queue while it reconnects; a round's caller stops
    // waiting at node_timeout) and command_timeout. Per-call `Options`
    // would not reach them: fred 10.1 has no `LuaInterface` for
    // `WithOptions`, so `with_options(…).evalsha(…)` derefs to the plain
    // client (the options this code used to pass were dropped that way).
    // Applying them as a custom EVALSHA was tried and dropped: with
    // fail-fast, batches sent during a reconnect fail at once and their
    // releases are lost, and fred flushes custom commands one by one.
    //
    // fred's request futures are about 7 KB each: boxed, they are written
    // once to the heap instead of being copied into every future that
    // awaits them (a node request, its timeout, its round), which cost the
    // daemon a tenth of its time in `memcpy` (docs/performance.md, workload (b)).
    //
    // `call` makes the keys and arguments: again only when the node did not
    // know the script, so a call does not copy them in case it must retry.
    let (keys, args) = call();
    let first = Box::pin(client.evalsha(script.sha.as_str(), keys, args)).await;
    let result = match first {
        Err(e) if e.details().starts_with("NOSCRIPT") => {
            // On a cluster, into every primary (fred would pick one).
            if client.is_clustered() {
                Box::pin(client.script_load_cluster::<(), _>(script.lua.as_str()))
                    .await
                    .map_err(node_error)?;
            } else {
                Box::pin(client.script_load::<String, _>(script.lua.as_str()))
                    .await
                    .map_err(node_error)?;
            }
            let (keys, args) = call();
            Box::pin(client.evalsha(script.sha.as_str(), keys, args)).await
        }
        other => other,
    };
    result.map_err(node_error)
}

/// `text` with the glob characters of a `SCAN MATCH` pattern escaped, so
/// it matches itself only.
pub(super) fn glob_escaped(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '^' | '-') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// Runs a script by SHA on `client` only if the node has it: `None` on
/// `NOSCRIPT`, and nothing loaded (the scripts proved by the cache,
/// docs/design.md#process-identity).
pub(super) async fn eval_if_loaded<'a>(
    client: &Client,
    script: &Script,
    call: impl Fn() -> (Vec<&'a str>, Vec<Value>),
) -> Result<Option<Value>, NodeError> {
    let (keys, args) = call();
    match Box::pin(client.evalsha(script.sha.as_str(), keys, args)).await {
        Ok(reply) => Ok(Some(reply)),
        Err(e) if e.details().starts_with("NOSCRIPT") => Ok(None),
        Err(e) => Err(node_error(e)),
    }
}

pub(super) fn node_error(e: fred::error::Error) -> NodeError {
    NodeError(e.to_string())
}

pub(super) fn millis(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

pub(super) fn ttl_arg(ttl: Duration) -> Value {
    Value::Integer(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX).max(1))
}
