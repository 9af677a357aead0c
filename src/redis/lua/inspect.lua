-- Introspection: the lock key (its value and holder record), its time
-- left (ms), the fence counter (KEYS[2]), how many shared holders
-- (KEYS[3]) are alive on the master's clock, and the number of permits
-- remembered for a semaphore of the name (KEYS[4]).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2]),
  redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf'), redis.call('GET', KEYS[4])}
