-- Compare-and-`PEXPIRE` for a batch of locks: KEYS[i] is extended to
-- ARGV[2i] ms when it holds ARGV[2i-1]. Replies one 0 or 1 per key, in
-- order. One call carries every extension that was due at once
-- (docs/performance.md, workload (d)): each master runs one script per
-- batch, not one per lock.
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
