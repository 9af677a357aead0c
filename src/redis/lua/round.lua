-- Round-1 locks and releases for one master, a batch of them in one call,
-- applied in the order they were asked for (docs/performance.md, workload (b)): requests that
-- reach a master while its last batch is on the way leave together, so the
-- master runs one script, one `INFO` and one counter write per batch, not
-- per request, and a release queued after a lock can never overtake it.
--
-- A request is its kind, a byte: `L` a lock, `U` a release announced
-- never, `W` when a refused attempt waits, `A` always; its lock key; a
-- lock's fence counter of the lock's bucket (docs/design.md#keys); its
-- value; and a lock's TTL in ms and holder tag (`daemon\ntenant\nowner`).
-- The lock's waiting mark and its bucket's verified marker are the keys
-- beside it, named here only when a request needs them (a refusal, a
-- release of a waited-for lock, a bucket's first grant): every string
-- passed costs the master more than the rare path's naming it
-- (docs/performance.md#instructions-a-master-runs-per-cycle). Where they
-- are is up to the requests part: declared as KEYS (`round_requests.lua`:
-- a standalone master, whose batch mixes buckets, each read once; or one
-- slot of a cluster), or all in ARGV over every slot of one cluster
-- primary (`round_requests_by_primary.lua`). ARGV[1] is this daemon's tag,
-- ARGV[2] how releases are announced (`PUBLISH`, or `SPUBLISH` on a
-- cluster) on the channel of the lock's bucket
-- (`<prefix>:{<tag>}:released`), ARGV[3] how long (ms) a lock refused by
-- shared holders keeps new ones out. Replies one integer per request, in
-- order. (Exclusive values only: shared ones go by `shared.rs`.)
--
-- A lock key holds the value, then (after `\n`) who holds it
-- (docs/design.md#who-holds-it): `value\ncounter\ngranted_ms\n` + the tag.
-- Every script compares only the key's first `#value` bytes (values have
-- one fixed length: no value is a prefix of another).
--
-- **Lock:** the counter granted; 0 when another owner holds the key; -1
-- when the node was not verified since its data was lost or it started;
-- -2 when it restarted or failed over since; -3 when the counter would
-- reach 2^53, where Lua's doubles stop being exact (fail closed: nothing
-- is granted; docs/design.md#the-lock-on-one-master keeps counters below it).
-- - A grant comes only from a node whose data a daemon verified, and in
--   this very process: the marker (`run_id:master_replid`, written by
--   REPAIR into every bucket) must name the running process's `run_id`
--   (`INFO` read once per batch, at its first lock request; each bucket's
--   marker checked once). A restart
--   that kept its data, or a promoted replica that copied the marker,
--   fails here even before any daemon's monitor has noticed.
-- - On a verified node the bucket's counter is advanced by `INCR` and a
--   free key taken with one `SET NX` holding the new value. A counter
--   that was missing (`INCR` gave 1) is kept only where the bucket's
--   marker exists, seeded from the node's clock (`seed`: µs rounded up
--   to 2^20, the same on every master within a second; written with
--   `string.format('%d')`, which keeps all digits where `tostring` would
--   print 1.7e+15); without the marker it is deleted again and the lock
--   refused as unverified. So, in the cached variant, which reads no
--   marker, a bucket's counter stands for its marker: no script creates a
--   counter where the marker is missing (docs/design.md#process-identity).
--   The node's clock is read once per batch (`TIME`), for the grant time
--   of the record.
-- - Anything else (the key is held, the node is not verified, the counter
--   is full) is looked at before the key is written (a refused lock has
--   used a counter value: values are handed out at most once, not
--   without gaps; one that would reach 2^53 is taken back by `DECR`,
--   exact where Lua's doubles are not): a lock held by
--   another owner is refused (whatever the node's state: a refusal never
--   grants), and the refusal marks the lock as waited for (for the TTL
--   asked plus the longest retry delay), so its release is announced; the
--   mark names who waits: this daemon's tag, or `*` once a second daemon
--   was refused (see HAND_OFF). A lock refused by shared holders writes
--   before it until when new shared holders are refused (`W<ms>:`, on
--   the master's clock; docs/design.md#shared-locks). "Already mine" counts as success so a
--   re-sent command is harmless; it takes a fresh counter value, which
--   keeps every counter value handed out once, and records it (the TTL
--   kept).
--
-- **Release:** 1 when the key held the value and is now gone, else 0. The
-- key is published on the release channel when the kind is `A`, or `W`
-- and a refused attempt marked the lock (the mark is cleared: one `DEL` of
-- both keys deletes two when it was marked).
--
-- Each `redis.call` costs the master about a microsecond, so the common
-- cases take as few as they can: a lock of a free key is an `INCR` and a
-- `SET NX` (plus, once per batch, `TIME`, and in the `INFO` variant
-- `INFO` once and a `GET` of each bucket's marker), a release a `GET` and
-- a `DEL`.
--@seed_from_clock
local tag, publish, writer_wait = ARGV[1], ARGV[2], ARGV[3]
local checked = {}
local process = nil
local clock, now_ms = nil, nil
-- One request: its four keys and four arguments as above; its reply.
-- `<prefix>:{<tag>}:` of lock key `key`, the start of every key beside it,
-- and where its lock name begins.
local function start_of(key)
  local at = string.find(key, '}:', 1, true) + 2
  return string.sub(key, 1, at - 1), at
end
local function waiting_of(key)
  local start, at = start_of(key)
  return start .. 'waiting:' .. string.sub(key, at)
end
local function request(key, fence, kind, value, extra, holder)
  if kind ~= 76 then
    local held = redis.call('GET', key)
    if not held or string.sub(held, 1, #value) ~= value then
      return 0
    end
    if kind == 85 then
      redis.call('DEL', key)
    elseif redis.call('DEL', key, waiting_of(key)) == 2 or kind == 65 then
      redis.call(publish, start_of(key) .. 'released', key)
    end
    return 1
  end
--@check
  local following, holding = nil, nil
  if verified > 0 then
    if clock == nil then
      clock = redis.call('TIME')
      now_ms = string.format('\n%d\n', tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000))
    end
    following = redis.call('INCR', fence)
    if following == 1 then
      if redis.call('EXISTS', start_of(key) .. 'verified') == 1 then
        following = seed(clock)
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
      holding = value .. string.format('\n%d', following) .. now_ms .. holder
    end
  end
  if following ~= nil and following < 9007199254740992
      and redis.call('SET', key, holding, 'NX', 'PX', extra) then
    return following
  end
  local waiting = waiting_of(key)
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
    return 0
  elseif verified < 0 then
    return verified
  elseif following >= 9007199254740992 then
    return -3
  end
  if held == false then
    redis.call('SET', key, holding, 'PX', extra)
  else
    redis.call('SET', key, holding, 'KEEPTTL')
  end
  return following
end
--@requests
