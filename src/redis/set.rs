//! Several resources at once on one master
//! (docs/design.md#sets): the whole set or none of it,
//! in one script (`lua/set.lua`) per slot.

use std::time::Duration;

use fred::prelude::Value;

use super::conn::{Conn, ttl_arg};
use super::replies::{self, Locked};
use super::scripts::{Role, SCRIPTS};
use crate::redlock::node::NodeError;

/// Takes the set `keys` for `value`: a counter per member, or why not (a
/// refusal, or the node's state: `replies::set`). On a cluster each slot's
/// members go in one call, slot after slot, stopping at the first that is
/// not granted; the caller gives back what the slots before it took.
pub(super) async fn lock(
    conn: &Conn,
    keys: &[String],
    value: &str,
    ttl: Duration,
    holder: &str,
) -> Result<Result<Vec<u64>, Locked>, NodeError> {
    if !conn.clustered() {
        let members: Vec<&String> = keys.iter().collect();
        return in_one_call(conn, &members, value, ttl, holder).await;
    }
    let mut counters = vec![0; keys.len()];
    for (_, at) in super::keys::slot_groups(keys, |k| k.as_str()) {
        let members: Vec<&String> = at.iter().map(|i| &keys[*i]).collect();
        match in_one_call(conn, &members, value, ttl, holder).await? {
            Ok(got) => {
                for (i, counter) in at.into_iter().zip(got) {
                    counters[i] = counter;
                }
            }
            Err(refused) => return Ok(Err(refused)),
        }
    }
    Ok(Ok(counters))
}

/// SET in one call: the members must share one slot on a cluster.
async fn in_one_call(
    conn: &Conn,
    members: &[&String],
    value: &str,
    ttl: Duration,
    holder: &str,
) -> Result<Result<Vec<u64>, Locked>, NodeError> {
    // Each member's lock key, waiting mark, fence counter and marker.
    let roles = [Role::Lock, Role::Waiting, Role::Fence, Role::Marker];
    let keys: Vec<_> = members.iter().map(|key| roles.map(|role| role.of(key))).collect();
    let all = keys.iter().flatten().map(String::as_str).collect();
    let args = vec![
        Value::from(value),
        ttl_arg(ttl),
        Value::from(holder),
        conn.waiter_tag.clone(),
        conn.writer_wait.clone(),
    ];
    replies::set(conn.eval(&SCRIPTS.set, all, args).await?, members.len())
}
