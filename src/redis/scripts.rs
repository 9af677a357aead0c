//! The Lua scripts of docs/design.md#the-lock-on-one-master, each one atomic step on one master, and
//! their SHA-1s (called by `EVALSHA`, reloaded on `NOSCRIPT`).

/// Lua that sets `run_id` to the running process's `run_id` (from `INFO
/// server`, by plain `string.find`, which costs the master a microsecond
/// less than a pattern), or to `nil` when it cannot be read (fails closed:
/// unverified). Shared by ROUND and HAND_OFF, the two scripts that grant.
macro_rules! run_id_from_info {
    () => {
        r"local info = redis.call('INFO', 'server')
local from = string.find(info, 'run_id:', 1, true)
local to = from and string.find(info, '\r', from, true)
local run_id = to and string.sub(info, from + 7, to - 1)
"
    };
}
pub(super) use run_id_from_info;

/// ROUND's check that a bucket's marker names the running process, with
/// `INFO` read once per batch (`process`, empty when unreadable: fails
/// closed).
macro_rules! round_info_check {
    () => {
        concat!(
            "        if process == nil then\n",
            run_id_from_info!(),
            r"          process = run_id or ''
        end
        if process ~= '' and string.sub(marker, 1, #process + 1) == process .. ':' then
          verified = 1
        else
          verified = -2
        end
"
        )
    };
}

/// ROUND's check, once per bucket of a batch (`checked`), that the bucket's
/// marker names the running process (`verified`: 1, or -1 without a
/// marker, -2 naming another process). The cached variant
/// (`cached_variants`) replaces it whole: the script cache proves the
/// process, and the bucket's counter stands for its marker (below).
macro_rules! round_marker_check {
    () => {
        concat!(
            r"    local verified = checked[fence]
    if verified == nil then
      local marker = redis.call('GET', KEYS[4 * i])
      verified = -1
      if marker ~= false then
",
            round_info_check!(),
            r"      end
      checked[fence] = verified
    end
"
        )
    };
}

/// Round-1 locks and releases for one master, a batch of them in one call,
/// applied in the order they were asked for (docs/performance.md, workload (b)): requests that
/// reach a master while its last batch is on the way leave together, so the
/// master runs one script, one `INFO` and one counter write per batch, not
/// per request, and a release queued after a lock can never overtake it.
///
/// Request i has four keys (docs/design.md#keys): KEYS[4i-3] its lock
/// key, KEYS[4i-2] the lock's waiting mark, KEYS[4i-1] and KEYS[4i] the
/// fence counter and the verified marker of the lock's bucket. (A batch
/// to a standalone master mixes buckets; each bucket is read once.)
/// ARGV[1] is this daemon's tag, ARGV[2] how releases are announced
/// (`PUBLISH`, or `SPUBLISH` on a cluster) on the channel of the lock's
/// bucket (`<prefix>:{<tag>}:released`), ARGV[3] how
/// long (ms) a lock refused by shared holders keeps new ones out; request i
/// has ARGV[4i] (`L` lock or `U` release), ARGV[4i+1] (the value),
/// ARGV[4i+2] (a lock's TTL in ms; a release's announcement: empty
/// (never), `waited` or `always`) and ARGV[4i+3] (a lock's holder tag,
/// `daemon\ntenant\nowner`; empty for a release). Replies one integer per
/// request, in order. (Exclusive values only: shared ones go by
/// `shared.rs`.)
///
/// A lock key holds the value, then (after `\n`) who holds it
/// (docs/design.md#who-holds-it): `value\ncounter\ngranted_ms\n` + the tag.
/// Every script compares only the key's first `#value` bytes (values have
/// one fixed length: no value is a prefix of another).
///
/// **Lock:** the counter granted; 0 when another owner holds the key; -1
/// when the node was not verified since its data was lost or it started;
/// -2 when it restarted or failed over since; -3 when the counter would
/// reach 2^53, where Lua's doubles stop being exact (fail closed: nothing
/// is granted; docs/design.md#the-lock-on-one-master keeps counters below it).
/// - A grant comes only from a node whose data a daemon verified, and in
///   this very process: the marker (`run_id:master_replid`, written by
///   REPAIR into every bucket) must name the running process's `run_id`
///   (`INFO` read once per batch, at its first lock request; each bucket's
///   marker checked once). A restart
///   that kept its data, or a promoted replica that copied the marker,
///   fails here even before any daemon's monitor has noticed.
/// - On a verified node the bucket's counter is advanced by `INCR` and a
///   free key taken with one `SET NX` holding the new value. A counter
///   that was missing (`INCR` gave 1) is kept only where the bucket's
///   marker exists, seeded from the node's clock (µs, written with
///   `string.format('%d')`, which keeps all digits where `tostring` would
///   print 1.7e+15); without the marker it is deleted again and the lock
///   refused as unverified. So, in the cached variant, which reads no
///   marker, a bucket's counter stands for its marker: no script creates a
///   counter where the marker is missing (docs/design.md#process-identity).
///   The node's clock is read once per batch (`TIME`), for the grant time
///   of the record.
/// - Anything else (the key is held, the node is not verified, the counter
///   is full) is looked at before the key is written (a refused lock has
///   used a counter value: values are handed out at most once, not
///   without gaps; one that would reach 2^53 is taken back by `DECR`,
///   exact where Lua's doubles are not): a lock held by
///   another owner is refused (whatever the node's state: a refusal never
///   grants), and the refusal marks the lock as waited for (for the TTL
///   asked plus the longest retry delay), so its release is announced; the
///   mark names who waits: this daemon's tag, or `*` once a second daemon
///   was refused (see HAND_OFF). A lock refused by shared holders writes
///   before it until when new shared holders are refused (`W<ms>:`, on
///   the master's clock; docs/design.md#shared-locks). "Already mine" counts as success so a
///   re-sent command is harmless; it takes a fresh counter value, which
///   keeps every counter value handed out once, and records it (the TTL
///   kept).
///
/// **Release:** 1 when the key held the value and is now gone, else 0. The
/// key is published on the release channel when the announcement is
/// `always`, or `waited` and a refused attempt marked the lock (the mark is
/// cleared: one `DEL` of both keys deletes two when it was marked).
///
/// Each `redis.call` costs the master about a microsecond, so the common
/// cases take as few as they can: a lock of a free key is an `INCR` and a
/// `SET NX` (plus, once per batch, `TIME`, and in the `INFO` variant
/// `INFO` once and a `GET` of each bucket's marker), a release a `GET` and
/// a `DEL`.
pub const ROUND: &str = concat!(
    r"
local tag, publish, writer_wait = ARGV[1], ARGV[2], ARGV[3]
local replies = {}
local checked = {}
local process = nil
local clock, now_ms = nil, nil
for i = 1, #KEYS / 4 do
  local key, waiting, fence = KEYS[4 * i - 3], KEYS[4 * i - 2], KEYS[4 * i - 1]
  local kind, value, extra = ARGV[4 * i], ARGV[4 * i + 1], ARGV[4 * i + 2]
  if kind == 'U' then
    local held = redis.call('GET', key)
    if not held or string.sub(held, 1, #value) ~= value then
      replies[i] = 0
    else
      if extra == '' then
        redis.call('DEL', key)
      elseif redis.call('DEL', key, waiting) == 2 or extra == 'always' then
        redis.call(publish, string.sub(key, 1, string.find(key, '}:', 1, true) + 1) .. 'released', key)
      end
      replies[i] = 1
    end
  else
",
    round_marker_check!(),
    r"    local following, holding = nil, nil
    if verified > 0 then
      if clock == nil then
        clock = redis.call('TIME')
        now_ms = string.format('\n%d\n', tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000))
      end
      following = redis.call('INCR', fence)
      if following == 1 then
        if redis.call('EXISTS', KEYS[4 * i]) == 1 then
          following = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
          redis.call('SET', fence, string.format('%d', following))
        else
          redis.call('DEL', fence)
          verified, following = -1, nil
          checked[fence] = -1
        end
      elseif following >= 9007199254740992 then
        redis.call('DECR', fence)
      end
      if following ~= nil then
        holding = value .. string.format('\n%d', following) .. now_ms .. ARGV[4 * i + 3]
      end
    end
    if following ~= nil and following < 9007199254740992
        and redis.call('SET', key, holding, 'NX', 'PX', extra) then
      replies[i] = following
    else
      local found = redis.call('MGET', key, waiting)
      local held = found[1]
      if held ~= false and string.sub(held, 1, #value) ~= value then
        local who = tag
        if found[2] ~= false and found[2] ~= tag then
          who = '*'
        end
        if string.sub(held, 1, 7) == '\tshared' then
          local t = redis.call('TIME')
          local until_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(writer_wait)
          who = string.format('W%d:', until_ms) .. who
        end
        redis.call('SET', waiting, who, 'PX', tonumber(extra) + 10000)
        replies[i] = 0
      elseif verified < 0 then
        replies[i] = verified
      elseif following >= 9007199254740992 then
        replies[i] = -3
      else
        if held == false then
          redis.call('SET', key, holding, 'PX', extra)
        else
          redis.call('SET', key, holding, 'KEEPTTL')
        end
        replies[i] = following
      end
    end
  end
end
return replies
"
);

/// Hand-off (docs/design.md#hand-off): release ARGV[1] and lock ARGV[2] for
/// ARGV[3] ms in one step, for the next waiter of the same daemon. Like
/// ROUND's locks it grants only on a free key (or one it already holds: a
/// re-send), on a verified node, and advances the fence counter; the new
/// value is followed by its holder record (ARGV[5] is the new holder's
/// tag). Replies `{was_held, counter, waited}`: whether ARGV[1] held the
/// key, the new counter (0 = not granted; an unverified node only
/// releases), and whether a daemon other than ARGV[4] (this one's tag) was
/// refused since the last announced release: the mark (KEYS[4], left for
/// the ROUND release that announces) names another daemon or several.
pub const HAND_OFF: &str = concat!(
    r"
local found = redis.call('MGET', KEYS[1], KEYS[3], KEYS[2], KEYS[4])
local held, marker = found[1], found[2]
local waited = 0
if found[4] ~= false and found[4] ~= ARGV[4] then
  waited = 1
end
local was = 0
if held ~= false and string.sub(held, 1, #ARGV[1]) == ARGV[1] then
  was = 1
elseif held ~= false and string.sub(held, 1, #ARGV[2]) ~= ARGV[2] then
  return {0, 0, waited}
end
",
    run_id_from_info!(),
    r"if marker == false or not run_id or string.sub(marker, 1, #run_id + 1) ~= run_id .. ':' then
  if was == 1 then
    redis.call('DEL', KEYS[1])
  end
  return {was, 0, waited}
end
local t = redis.call('TIME')
local counter
if found[3] ~= false then
  counter = redis.call('INCR', KEYS[2])
else
  counter = tonumber(t[1]) * 1000000 + tonumber(t[2])
  redis.call('SET', KEYS[2], string.format('%d', counter))
end
redis.call('SET', KEYS[1], ARGV[2] .. string.format('\n%d\n%d\n', counter,
  tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) .. ARGV[5], 'PX', ARGV[3])
return {was, counter, waited}
"
);

/// Round 2: while the lock is ours, raise the counter (KEYS[2]) to at
/// least ARGV[2]. A missing counter is written only where the bucket's
/// marker (KEYS[3]) exists (see ROUND: the counter stands for it); without
/// it the reply is 0, not raised.
pub const PUBLISH_FENCE: &str = r"
local held = redis.call('GET', KEYS[1])
if not held or string.sub(held, 1, #ARGV[1]) ~= ARGV[1] then
  return 0
end
local current = redis.call('GET', KEYS[2])
if current == false and redis.call('EXISTS', KEYS[3]) == 0 then
  return 0
end
if current == false or tonumber(current) < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
end
return 1
";

/// Counter repair before a quarantined node rejoins (docs/design.md#repair), for
/// a run of buckets: bucket i's fence counter KEYS[2i-1] is raised to at
/// least ARGV[i+1] (the max read from a quorum of the others; empty = no
/// raise), and its marker KEYS[2i] set to ARGV[1], the identity
/// (`run_id:master_replid`) of the process whose data is now vouched for.
pub const REPAIR: &str = r"
for i = 1, #KEYS / 2 do
  local floor = ARGV[i + 1]
  if floor ~= '' then
    local current = tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0')
    if current < tonumber(floor) then
      redis.call('SET', KEYS[2 * i - 1], floor)
    end
  end
  redis.call('SET', KEYS[2 * i], ARGV[1])
end
return 1
";

/// Introspection: the lock key (its value and holder record), its time
/// left (ms), the fence counter (KEYS[2]), how many shared holders
/// (KEYS[3]) are alive on the master's clock, and the number of permits
/// remembered for a semaphore of the name (KEYS[4]).
pub const INSPECT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2]),
  redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf'), redis.call('GET', KEYS[4])}
";

/// Listing (docs/design.md#listing-and-force-release): for each lock key
/// KEYS[i], what it holds (value and holder record) and its time left (ms);
/// two replies per lock, in order.
pub const VIEWS: &str = r"
local views = {}
for i, key in ipairs(KEYS) do
  views[2 * i - 1] = redis.call('GET', key)
  views[2 * i] = redis.call('PTTL', key)
end
return views
";

/// Force release (docs/design.md#listing-and-force-release): delete the
/// lock key KEYS[1] whatever it holds, with its waiting mark (KEYS[4]), and
/// announce it (ARGV[2], `PUBLISH` or `SPUBLISH`) on its bucket's channel
/// ARGV[1] so waiters try at once. The fence counter (KEYS[2]) is left as
/// it is. Replies 1 when the key was held.
pub const FORCE_RELEASE: &str = r"
local held = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[4])
redis.call(ARGV[2], ARGV[1], KEYS[1])
return held
";

/// Compare-and-`PEXPIRE` for a batch of locks: KEYS[i] is extended to
/// ARGV[2i] ms when it holds ARGV[2i-1]. Replies one 0 or 1 per key, in
/// order. One call carries every extension that was due at once
/// (docs/performance.md, workload (d)): each master runs one script per
/// batch, not one per lock.
pub const EXTEND: &str = r"
local extended = {}
for i, key in ipairs(KEYS) do
  local held = redis.call('GET', key)
  local value = ARGV[2 * i - 1]
  if held and string.sub(held, 1, #value) == value then
    extended[i] = redis.call('PEXPIRE', key, ARGV[2 * i])
  else
    extended[i] = 0
  end
end
return extended
";

/// ROUND's check of each bucket's marker, by `INFO` once per batch.
const ROUND_MARKER_CHECK: &str = round_marker_check!();

/// What the cached ROUND checks instead: nothing until a counter is
/// missing (a bucket found unverified in the batch stays so).
const ROUND_CACHED_CHECK: &str = "    local verified = checked[fence] or 1\n";

/// HAND_OFF's check, by `INFO`.
const HAND_OFF_INFO_CHECK: &str = concat!(
    run_id_from_info!(),
    r"if marker == false or not run_id or string.sub(marker, 1, #run_id + 1) ~= run_id .. ':' then
"
);

/// ROUND and HAND_OFF for a master whose script cache proves its process
/// (docs/design.md#process-identity): the same scripts without the `INFO`
/// call, and with a first line naming this daemon (`nonce`, random), so
/// their text, and their SHA-1, are this daemon's alone. Loaded only into
/// a process this daemon verified; anywhere else `EVALSHA` of them answers
/// `NOSCRIPT` (Redis 7 neither persists nor replicates its script cache),
/// and `NOSCRIPT` then means "unverified": the batch goes again with the
/// `INFO` variant, never "load and retry".
pub fn cached_variants(nonce: &str) -> (String, String) {
    let first = format!("-- redlockd {nonce}: loaded only into a process this daemon verified\n");
    let round = ROUND.replacen(ROUND_MARKER_CHECK, ROUND_CACHED_CHECK, 1);
    let hand_off = HAND_OFF.replacen(HAND_OFF_INFO_CHECK, "if marker == false then\n", 1);
    (format!("{first}{round}"), format!("{first}{hand_off}"))
}

/// The pub/sub channel on which releases of the locks of the bucket of
/// lock key `key` are announced: `<prefix>:{<tag>}:released`
/// (docs/design.md#waiting).
pub fn released_channel(key: &str) -> String {
    super::keys::of_bucket(key, "released")
}

/// A Lua script and its SHA-1, computed once.
#[derive(Clone)]
pub struct Script {
    /// The Lua source, for SCRIPT LOAD.
    pub lua: String,
    /// Its SHA-1, for EVALSHA.
    pub sha: String,
    /// It reads KEYS[4], the lock's waiting mark (HAND_OFF, FORCE_RELEASE);
    /// the other one-lock scripts are called without it. (ROUND, EXTEND,
    /// INSPECT, VIEWS and the scripts of `shared.rs` and `permits.rs` lay
    /// out their own keys.)
    pub uses_waiting_mark: bool,
}

impl Script {
    /// A script and its SHA-1.
    pub fn new(lua: impl Into<String>) -> Script {
        let lua = planted_call(lua.into());
        Script {
            sha: fred::util::sha1_hash(&lua),
            uses_waiting_mark: lua.contains("KEYS[4]"),
            lua,
        }
    }
}

/// `lua` itself; but in a debug build with `REDLOCKD_TEST_PLANTED_CALL`
/// set, a script with keys (the grant script among them) first calls
/// `EXISTS` on its first key: a harmless extra call that
/// scripts/check-budget --self-test plants to show the budget failing
/// (docs/performance.md#the-budget). Release builds ignore the variable.
fn planted_call(lua: String) -> String {
    if cfg!(debug_assertions) && std::env::var_os("REDLOCKD_TEST_PLANTED_CALL").is_some() && lua.contains("KEYS[") {
        // After a `#!lua flags=...` line, which must come first.
        let at = if lua.starts_with("#!") {
            lua.find('\n').map_or(lua.len(), |i| i + 1)
        } else {
            0
        };
        return format!("{}redis.call('EXISTS', KEYS[1])\n{}", &lua[..at], &lua[at..]);
    }
    lua
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cached_variants_drop_only_the_info_check_and_name_their_daemon() {
        assert!(ROUND.contains(ROUND_MARKER_CHECK) && HAND_OFF.contains(HAND_OFF_INFO_CHECK));
        let (round, hand_off) = cached_variants("n0nce");
        for (lua, full) in [(&round, ROUND), (&hand_off, HAND_OFF)] {
            assert!(lua.starts_with("-- redlockd n0nce:"), "{lua}");
            assert!(!lua.contains("INFO"), "{lua}");
            assert!(full.contains("'INFO'"));
            // The marker is still required: HAND_OFF reads it, ROUND where
            // a bucket's counter is missing.
            let required = lua.contains(ROUND_CACHED_CHECK) && lua.contains("redis.call('EXISTS', KEYS[4 * i]) == 1")
                || lua.contains("if marker == false then\n");
            assert!(required, "the marker is still required: {lua}");
        }
        // Another daemon's variants are other scripts.
        let (other, _) = cached_variants("other");
        assert_ne!(Script::new(round).sha, Script::new(other).sha);
    }

    #[test]
    fn exactly_the_scripts_that_read_the_waiting_mark_are_given_it() {
        for lua in [HAND_OFF, FORCE_RELEASE] {
            assert!(Script::new(lua).uses_waiting_mark, "{lua}");
        }
        for lua in [PUBLISH_FENCE, REPAIR] {
            assert!(!Script::new(lua).uses_waiting_mark, "{lua}");
        }
    }
}
