-- An election's record (docs/design.md#elections), set only while the
-- election's lock holds the writer's value, and announced (observers look
-- again). KEYS[1] the lock, KEYS[2] the record; ARGV[1] the lock's value,
-- ARGV[2] the record, ARGV[3] its TTL (ms), ARGV[4] the bucket's release
-- channel, ARGV[5] the command that publishes on it. 1 written, 0 not held.
local publish = ARGV[5]
local held = redis.call('GET', KEYS[1])
if not held or string.sub(held, 1, #ARGV[1]) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call(publish, ARGV[4], KEYS[1])
return 1
