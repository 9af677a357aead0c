-- Extends readers, a batch in one call: KEYS[2i-1] the lock key and
-- KEYS[2i] its readers, ARGV[2i-1] the value and ARGV[2i] the TTL (ms).
-- A reader still alive on the master's clock lives until now + TTL, and
-- the key until the last reader's deadline. Replies 1 or 0 per reader.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local extended = {}
for i = 1, #KEYS / 2 do
  local key, readers, value = KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i - 1]
  local held = redis.call('GET', key)
  local deadline = redis.call('ZSCORE', readers, value)
  if held and string.sub(held, 1, 7) == '\tshared' and deadline and tonumber(deadline) > now then
    redis.call('ZADD', readers, now + tonumber(ARGV[2 * i]), value)
    local last = math.floor(tonumber(redis.call('ZRANGE', readers, -1, -1, 'WITHSCORES')[2]))
    redis.call('PEXPIREAT', key, last)
    redis.call('PEXPIREAT', readers, last)
    extended[i] = 1
  else
    extended[i] = 0
  end
end
return extended
