//! Several resources at once on one master
//! (docs/design.md#several-resources-at-once): the whole set or none of it,
//! in one script.

use fred::prelude::Value;

use super::eval::ttl_arg;
use super::node::RedisNode;
use super::replies;
use super::scripts::run_id_from_info;
use crate::redlock::node::NodeError;

/// KEYS[1] the fence counter, KEYS[2] the marker, then per member its lock
/// key and its waiting mark. ARGV: the value, the TTL (ms), the holder tag,
/// this daemon's tag (for waiting marks), how long (ms) a lock refused by
/// readers keeps new ones out.
///
/// Every member must be free or hold the value already (a re-send), else
/// nothing is written but the waiting marks of the members held by others
/// (as ROUND's refusals write them) and the reply is `{0}`. On a node this
/// process verified (as ROUND checks: `{-1}`, `{-2}`), each member takes
/// the next counter value (seeded from the clock; `{-3}` at 2^53) and its
/// holder record, and the reply is `{1, counter per member}`.
pub const MANY: &str = concat!(
    r"
local value, ttl, tag = ARGV[1], ARGV[2], ARGV[4]
local refused = false
for i = 3, #KEYS, 2 do
  local held = redis.call('GET', KEYS[i])
  if held and string.sub(held, 1, #value) ~= value then
    refused = true
    local mark = redis.call('GET', KEYS[i + 1])
    local who = tag
    if mark ~= false and mark ~= tag then
      who = '*'
    end
    if string.sub(held, 1, 7) == '\tshared' then
      local t = redis.call('TIME')
      who = string.format('W%d:', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[5])) .. who
    end
    redis.call('SET', KEYS[i + 1], who, 'PX', tonumber(ttl) + 10000)
  end
end
if refused then
  return {0}
end
local marker = redis.call('GET', KEYS[2])
if marker == false then
  return {-1}
end
",
    run_id_from_info!(),
    r"if not run_id or string.sub(marker, 1, #run_id + 1) ~= run_id .. ':' then
  return {-2}
end
local t = redis.call('TIME')
local stored = redis.call('GET', KEYS[1])
local counter
if stored == false then
  counter = tonumber(t[1]) * 1000000 + tonumber(t[2]) - 1
else
  counter = tonumber(stored)
end
if counter + (#KEYS - 2) / 2 >= 9007199254740992 then
  return {-3}
end
local now_ms = string.format('\n%d\n', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local replies = {1}
for i = 3, #KEYS, 2 do
  counter = counter + 1
  redis.call('SET', KEYS[i], value .. string.format('\n%d', counter) .. now_ms .. ARGV[3], 'PX', ttl)
  replies[#replies + 1] = counter
end
redis.call('SET', KEYS[1], string.format('%d', counter))
return replies
"
);

impl RedisNode {
    /// `Node::try_lock_many`.
    pub(super) async fn lock_many(
        &self,
        keys: &[String],
        value: &str,
        ttl: std::time::Duration,
        holder: &str,
    ) -> Result<Option<Vec<u64>>, NodeError> {
        let waiting: Vec<String> = keys.iter().map(|key| self.waiting_key(key)).collect();
        let mut all = Vec::with_capacity(2 + 2 * keys.len());
        all.extend([self.fence_key.as_str(), self.marker_key.as_str()]);
        for (key, waiting) in keys.iter().zip(&waiting) {
            all.extend([key.as_str(), waiting.as_str()]);
        }
        let args = vec![
            Value::from(value),
            ttl_arg(ttl),
            Value::from(holder),
            self.waiter_tag.clone(),
            self.batches.head_args[2].clone(),
        ];
        match replies::many(self.eval_observed(&self.many, all, args).await?, keys.len())? {
            Ok(counters) => Ok(Some(counters)),
            // Never a grant: 0 is a refusal, the rest are errors.
            Err(refused) => self.counted_grant(refused).map(|_| None),
        }
    }
}
