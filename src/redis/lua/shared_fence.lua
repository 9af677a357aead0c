-- Round 2 for a reader: while the value is a reader of the key, raise the
-- fence counter to at least ARGV[2]. KEYS: the lock key, the fence
-- counter, the readers, the bucket's marker (a missing counter is written
-- only where it exists, as by PUBLISH_FENCE; else the reply is 0).
local held = redis.call('GET', KEYS[1])
if not held or string.sub(held, 1, 7) ~= '\tshared' or not redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  return 0
end
local current = redis.call('GET', KEYS[2])
if current == false and redis.call('EXISTS', KEYS[4]) == 0 then
  return 0
end
if current == false or tonumber(current) < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
end
return 1
