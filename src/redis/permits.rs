//! Semaphores on one master (docs/design.md#semaphores): the agreement on
//! the number of permits (remembered under `<prefix>:permits:<name>` while
//! any permit is out) and the extension of permits, which keeps it
//! remembered. A permit itself is an ordinary lock on a slot key
//! (`<prefix>:permit:<slot>:<name>`), taken and released by ROUND.

use fred::prelude::Value;

use super::eval::ttl_arg;
use super::node::RedisNode;
use super::replies;
use super::scripts::Script;
use crate::redlock::node::{Agreement, Extension, NodeError};

/// KEYS[1] the number of permits remembered, KEYS[2..] the slot keys;
/// ARGV[1] the number asked for, ARGV[2] a TTL (ms). Replies `{held}` when
/// another number is remembered (nothing changed); else remembers ARGV[1]
/// for at least the TTL and replies `{0, held_1, held_2, …}`: 1 for each
/// slot key that holds a lock.
pub const PERMITS: &str = r"
local n = redis.call('GET', KEYS[1])
if n and n ~= ARGV[1] then
  return {tonumber(n)}
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
local held = {0}
for i = 2, #KEYS do
  held[i] = redis.call('EXISTS', KEYS[i])
end
return held
";

/// Extends permits, a batch in one call: KEYS[2i-1] a slot key and
/// KEYS[2i] its semaphore's number of permits; ARGV[2i-1] the value and
/// ARGV[2i] the TTL (ms). As EXTEND, and a permit extended keeps the number
/// remembered at least as long (written again from the value, `p<n>.`, if
/// it was lost). Replies 1 or 0 per permit.
pub const PERMIT_EXTEND: &str = r"
local extended = {}
for i = 1, #KEYS / 2 do
  local key, permits, value, ttl = KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i - 1], ARGV[2 * i]
  local held = redis.call('GET', key)
  if held and string.sub(held, 1, #value) == value then
    extended[i] = redis.call('PEXPIRE', key, ttl)
    local left = redis.call('PTTL', permits)
    if left == -2 then
      redis.call('SET', permits, string.match(value, '^p(%d+)%.'), 'PX', ttl)
    elseif left >= 0 and left < tonumber(ttl) then
      redis.call('PEXPIRE', permits, ttl)
    end
  else
    extended[i] = 0
  end
end
return extended
";

/// The semaphore scripts of one node.
pub(super) struct PermitScripts {
    agree: Script,
    extend: Script,
}

impl PermitScripts {
    pub(super) fn new() -> PermitScripts {
        PermitScripts {
            agree: Script::new(PERMITS),
            extend: Script::new(PERMIT_EXTEND),
        }
    }

    /// Every script, for loading.
    pub(super) fn all(&self) -> [&Script; 2] {
        [&self.agree, &self.extend]
    }
}

impl RedisNode {
    /// The key remembering the number of permits of the semaphore whose
    /// slot key is `slot_key` (`<prefix>:{<tag>}:permit:<slot>:<name>`).
    fn permits_key_of(&self, slot_key: &str) -> String {
        super::keys::permits_of_slot(slot_key)
    }

    /// The key remembering the number of permits of a semaphore named as
    /// lock `key` is (`<prefix>:{<tag>}:<name>`).
    pub(super) fn permits_key_for(&self, key: &str) -> String {
        super::keys::beside(key, "permits:")
    }

    /// `Node::agree_permits`.
    pub(super) async fn agree(
        &self,
        permits_key: &str,
        slots: &[String],
        n: u32,
        ttl: std::time::Duration,
    ) -> Result<Agreement, NodeError> {
        let mut keys = Vec::with_capacity(1 + slots.len());
        keys.push(permits_key);
        keys.extend(slots.iter().map(String::as_str));
        let args = vec![Value::from(n.to_string()), ttl_arg(ttl)];
        let reply = self.eval_observed(&self.permits.agree, keys, args).await?;
        replies::agreement(reply, slots.len())
    }

    /// `Node::extend` for permits.
    pub(super) async fn extend_permits(&self, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
        let permits: Vec<String> = locks.iter().map(|lock| self.permits_key_of(lock.key)).collect();
        let mut keys = Vec::with_capacity(locks.len() * 2);
        let mut args = Vec::with_capacity(locks.len() * 2);
        for (lock, permits) in locks.iter().zip(&permits) {
            keys.extend([lock.key, permits.as_str()]);
            args.extend([Value::from(lock.value), ttl_arg(lock.ttl)]);
        }
        let reply = self.eval_observed(&self.permits.extend, keys, args).await?;
        replies::flags(reply, locks.len())
    }
}
