-- Round 1 for a reader. KEYS: the lock key, the fence counter, the
-- marker, the waiting mark, the readers. ARGV: the value, the TTL (ms),
-- this daemon's tag (for the waiting mark).
--
-- Refused (0) while an exclusive holder has the key, or while an
-- exclusive request refused by readers keeps new ones out (a waiting
-- mark `W<ms>:…` still in the future, written by ROUND), unless the value
-- is a reader already (a re-send); a refusal marks the lock as waited for,
-- as ROUND's do (a writer's mark is left as it is). On a
-- node verified in this process (as ROUND checks it: -1, -2) the value
-- joins the readers until now + TTL, the key lives until the last
-- reader's deadline, and the reply is the fence counter, not advanced
-- (seeded from the clock when missing, raised to 1 from 0, since 0 says
-- "refused"; -3 at 2^53). A key that was free
-- drops readers left over from a force release.
--@seed_from_clock
local held = redis.call('GET', KEYS[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local shared = held ~= false and string.sub(held, 1, 7) == '\tshared'
local mark = redis.call('GET', KEYS[4])
local writer_waits = false
if mark ~= false and string.sub(mark, 1, 1) == 'W' then
  local colon = string.find(mark, ':', 2, true)
  writer_waits = colon ~= nil and tonumber(string.sub(mark, 2, colon - 1)) > now
end
if (held ~= false and not shared) or (writer_waits and not redis.call('ZSCORE', KEYS[5], ARGV[1])) then
  if not writer_waits then
    local who = ARGV[3]
    if mark ~= false and mark ~= who then
      who = '*'
    end
    redis.call('SET', KEYS[4], who, 'PX', tonumber(ARGV[2]) + 10000)
  end
  return 0
end
local marker = redis.call('GET', KEYS[3])
if marker == false then
  return -1
end
--@run_id_from_info
if not run_id or string.sub(marker, 1, #run_id + 1) ~= run_id .. ':' then
  return -2
end
local stored = redis.call('GET', KEYS[2])
local counter
if stored == false then
  counter = seed(t)
  redis.call('SET', KEYS[2], string.format('%d', counter))
elseif tonumber(stored) < 1 then
  counter = 1
  redis.call('SET', KEYS[2], '1')
else
  counter = tonumber(stored)
end
if counter >= 9007199254740992 then
  return -3
end
if shared then
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
else
  redis.call('DEL', KEYS[5])
end
redis.call('ZADD', KEYS[5], now + tonumber(ARGV[2]), ARGV[1])
local last = math.floor(tonumber(redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')[2]))
redis.call('SET', KEYS[1], '\tshared', 'PXAT', last)
redis.call('PEXPIREAT', KEYS[5], last)
return counter
