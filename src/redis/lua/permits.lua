-- KEYS[1] the number of permits remembered, KEYS[2..] the slot keys;
-- ARGV[1] the number asked for, ARGV[2] a TTL (ms). Replies `{held}` when
-- another number is remembered (nothing changed); else remembers ARGV[1]
-- for at least the TTL and replies `{0, held_1, held_2, …}`: 1 for each
-- slot key that holds a lock.
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
