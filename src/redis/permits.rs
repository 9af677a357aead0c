//! Semaphores on one master (docs/design.md#semaphores): the agreement on
//! the number of permits (remembered under `<prefix>:permits:<name>` while
//! any permit is out, `lua/permits.lua`) and the extension of permits,
//! which keeps it remembered (`lua/permit_extend.lua`). A permit itself is
//! an ordinary lock on a slot key (`<prefix>:permit:<slot>:<name>`), taken
//! and released by ROUND.

use std::time::Duration;

use fred::prelude::Value;

use super::conn::{Conn, ttl_arg};
use super::replies;
use super::scripts::SCRIPTS;
use crate::redlock::node::{Agreement, Extension, NodeError};

/// `Node::agree_permits`.
pub(super) async fn agree(
    conn: &Conn,
    permits_key: &str,
    slots: &[String],
    n: u32,
    ttl: Duration,
) -> Result<Agreement, NodeError> {
    let mut keys = Vec::with_capacity(1 + slots.len());
    keys.push(permits_key);
    keys.extend(slots.iter().map(String::as_str));
    let args = vec![Value::from(n.to_string()), ttl_arg(ttl)];
    replies::agreement(conn.eval(&SCRIPTS.permits, keys, args).await?, slots.len())
}

/// `Node::extend` for permits.
pub(super) async fn extend(conn: &Conn, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
    let script = &SCRIPTS.permit_extend;
    let keys: Vec<Vec<String>> = locks.iter().map(|lock| script.keys_of(lock.key)).collect();
    let args = (locks.iter())
        .flat_map(|lock| [Value::from(lock.value), ttl_arg(lock.ttl)])
        .collect();
    let reply = conn
        .eval(script, keys.iter().flatten().map(String::as_str).collect(), args)
        .await?;
    replies::flags(reply, locks.len())
}
