//! The Lua scripts of DESIGN §1, each one atomic step on one master, and
//! their SHA-1s (called by `EVALSHA`, reloaded on `NOSCRIPT`).

/// Round 1 (DESIGN §1). A lock held by another owner is refused at once
/// (a refusal never grants, so it needs no check of the node, and the
/// contended path skips `INFO`; an unverified master is then found out by
/// its next grant or probe, not by this refusal). A grant comes only from a node whose data
/// a daemon verified, and in this very process: the marker
/// (`run_id:master_replid`, written by REPAIR) must name the running
/// process's `run_id`. A restart that kept
/// its data, or a promoted replica that copied the marker, fails here even
/// before any daemon's monitor has noticed. Then lock, and advance the fence
/// counter, seeding it from the node's clock (µs) when missing. "Already mine" counts as success so a
/// re-sent command is harmless; it takes a fresh counter value, which keeps
/// every counter value handed out once. `string.format('%d')` keeps all
/// digits (`tostring` would print 1.7e+15). A refusal marks the lock as
/// waited for (KEYS[4], for the TTL asked plus the longest retry delay), so
/// its release is announced (UNLOCK). The mark names who waits: ARGV[3],
/// the refused daemon's tag, or `*` once a second daemon was refused (see
/// HAND_OFF). The four reads are one `MGET`: each `redis.call` costs the
/// master about a microsecond.
pub const TRY_LOCK: &str = r"
local found = redis.call('MGET', KEYS[3], KEYS[1], KEYS[2], KEYS[4])
local marker, held = found[1], found[2]
if held ~= false and held ~= ARGV[1] then
  local who = ARGV[3]
  if found[4] ~= false and found[4] ~= who then
    who = '*'
  end
  redis.call('SET', KEYS[4], who, 'PX', tonumber(ARGV[2]) + 10000)
  return false
end
if marker == false then
  return redis.error_reply('UNVERIFIED node not verified since its data was lost or it started')
end
local run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
if string.sub(marker, 1, string.len(run_id) + 1) ~= run_id .. ':' then
  return redis.error_reply('UNVERIFIED node restarted or failed over since it was verified')
end
if held == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
if found[3] ~= false then
  return redis.call('INCR', KEYS[2])
end
local t = redis.call('TIME')
local seed = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('SET', KEYS[2], string.format('%d', seed))
return seed
";

/// Hand-off (DESIGN §4, issue #7): release ARGV[1] and lock ARGV[2] for
/// ARGV[3] ms in one step, for the next waiter of the same daemon. Like
/// TRY_LOCK it grants only on a free key (or one it already holds: a
/// re-send), on a verified node, and advances the fence counter. Replies
/// `{was_held, counter, waited}`: whether ARGV[1] held the key, the new
/// counter (0 = not granted; an unverified node only releases), and whether
/// a daemon other than ARGV[4] (this one's tag) was refused since the last
/// announced release: the mark (KEYS[4], left for the UNLOCK that
/// announces) names another daemon or several.
pub const HAND_OFF: &str = r"
local found = redis.call('MGET', KEYS[1], KEYS[3], KEYS[2], KEYS[4])
local held, marker = found[1], found[2]
local waited = 0
if found[4] ~= false and found[4] ~= ARGV[4] then
  waited = 1
end
local was = 0
if held == ARGV[1] then
  was = 1
elseif held ~= false and held ~= ARGV[2] then
  return {0, 0, waited}
end
local run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
if marker == false or string.sub(marker, 1, string.len(run_id) + 1) ~= run_id .. ':' then
  if was == 1 then
    redis.call('DEL', KEYS[1])
  end
  return {was, 0, waited}
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if found[3] ~= false then
  return {was, redis.call('INCR', KEYS[2]), waited}
end
local t = redis.call('TIME')
local seed = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('SET', KEYS[2], string.format('%d', seed))
return {was, seed, waited}
";

/// Round 2: while the lock is ours, raise the counter to at least ARGV[2].
pub const PUBLISH_FENCE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local current = tonumber(redis.call('GET', KEYS[2]) or '0')
if current < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
end
return 1
";

/// Counter repair before a quarantined node rejoins (DESIGN §5): raise the
/// counter to at least ARGV[1] (the max read from a quorum of the others;
/// empty = no raise) and set the marker to ARGV[2], the identity
/// (`run_id:master_replid`) of the process whose data is now vouched for.
pub const REPAIR: &str = r"
if ARGV[1] ~= '' then
  local current = tonumber(redis.call('GET', KEYS[1]) or '0')
  if current < tonumber(ARGV[1]) then
    redis.call('SET', KEYS[1], ARGV[1])
  end
end
redis.call('SET', KEYS[2], ARGV[2])
return 1
";

/// Introspection: the lock value, its time left (ms) and the fence counter.
pub const INSPECT: &str = r"
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2])}
";

/// Compare-and-`PEXPIRE` for a batch of locks: KEYS[i] is extended to
/// ARGV[2i] ms when it holds ARGV[2i-1]. Replies one 0 or 1 per key, in
/// order. One call carries every extension that was due at once (issue #7,
/// (d)): each master runs one script per batch, not one per lock.
pub const EXTEND: &str = r"
local extended = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[2 * i - 1] then
    extended[i] = redis.call('PEXPIRE', key, ARGV[2 * i])
  else
    extended[i] = 0
  end
end
return extended
";

/// Compare-and-delete, then tell waiting daemons (DESIGN §4): the lock key
/// is published on the release channel ARGV[2] (empty: not announced) when
/// ARGV[3] is `always` or a refused attempt marked it waited for (KEYS[4],
/// cleared here: one `DEL` of both keys deletes two when it was marked).
pub const UNLOCK: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
elseif redis.call('DEL', KEYS[1], KEYS[4]) == 2 or ARGV[3] == 'always' then
  redis.call('PUBLISH', ARGV[2], KEYS[1])
end
return 1
";

/// The pub/sub channel on which releases are announced.
pub fn released_channel(key_prefix: &str) -> String {
    format!("{key_prefix}:released")
}

/// A Lua script and its SHA-1, computed once.
pub struct Script {
    /// The Lua source, for SCRIPT LOAD.
    pub lua: &'static str,
    /// Its SHA-1, for EVALSHA.
    pub sha: String,
    /// It reads KEYS[4], the lock's waiting mark (TRY_LOCK, HAND_OFF,
    /// UNLOCK); the other scripts are called without it.
    pub uses_waiting_mark: bool,
}

impl Script {
    /// A script and its SHA-1.
    pub fn new(lua: &'static str) -> Script {
        Script {
            lua,
            sha: fred::util::sha1_hash(lua),
            uses_waiting_mark: lua.contains("KEYS[4]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_the_scripts_that_read_the_waiting_mark_are_given_it() {
        for lua in [TRY_LOCK, HAND_OFF, UNLOCK] {
            assert!(Script::new(lua).uses_waiting_mark, "{lua}");
        }
        for lua in [PUBLISH_FENCE, REPAIR, INSPECT, EXTEND] {
            assert!(!Script::new(lua).uses_waiting_mark, "{lua}");
        }
    }
}
