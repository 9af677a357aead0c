-- Releases a reader. KEYS: the lock key, the waiting mark, the readers.
-- ARGV: the value, the announcement (as ROUND's), the release channel of
-- the lock's bucket, and `PUBLISH` or `SPUBLISH`.
-- Replies 1 when the value was a live reader. When the last reader
-- leaves, the key goes, and the release is announced as ROUND announces
-- one (the waiting mark, or `always`); a writer's mark stays, so the
-- waiting writer, not a new reader, takes the free key (the writer's own
-- release clears it). Else the key lives until the last remaining
-- reader's deadline.
local held = redis.call('GET', KEYS[1])
local deadline = redis.call('ZSCORE', KEYS[3], ARGV[1])
if not held or string.sub(held, 1, 7) ~= '\tshared' or not deadline then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')[2]
if last then
  last = math.floor(tonumber(last))
  redis.call('PEXPIREAT', KEYS[1], last)
  redis.call('PEXPIREAT', KEYS[3], last)
else
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then
    local mark = redis.call('GET', KEYS[2])
    if mark ~= false and string.sub(mark, 1, 1) ~= 'W' then
      redis.call('DEL', KEYS[2])
    end
    if mark ~= false or ARGV[2] == 'always' then
      redis.call(ARGV[4], ARGV[3], KEYS[1])
    end
  end
end
if tonumber(deadline) > now then
  return 1
end
return 0
