-- Round 2: while the lock is ours, raise the counter (KEYS[2]) to at
-- least ARGV[2]. A missing counter is written only where the bucket's
-- marker (KEYS[3]) exists (see ROUND: the counter stands for it); without
-- it the reply is 0, not raised.
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
