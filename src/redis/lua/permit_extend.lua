-- Extends permits, a batch in one call: KEYS[2i-1] a slot key and
-- KEYS[2i] its semaphore's number of permits; ARGV[2i-1] the value and
-- ARGV[2i] the TTL (ms). As EXTEND, and a permit extended keeps the number
-- remembered at least as long (written again from the value, `p<n>.`, if
-- it was lost). Replies 1 or 0 per permit.
local extended = {}
for i = 1, #KEYS / 2 do
  local key, permits, value, ttl = KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i - 1], ARGV[2 * i]
  local held = redis.call('GET', key)
  if held and string.sub(held, 1, #value) == value then
    extended[i] = redis.call('PEXPIRE', key, ttl)
    local left = redis.call('PTTL', permits)
    if left == -2 then
      redis.call('SET', permits, string.match(value, '^p(%d+)%.'), 'PX', ttl)
    elseif left >= 0 and left < tonumber(ttl) then
      redis.call('PEXPIRE', permits, ttl)
    end
  else
    extended[i] = 0
  end
end
return extended
