-- REPAIR for buckets of slots this primary serves: ARGV[1] the identity,
-- then per bucket its fence counter, its marker and its floor (empty: no
-- raise).
for i = 2, #ARGV, 3 do
  local fence, floor = ARGV[i], ARGV[i + 2]
  if floor ~= '' then
    local current = tonumber(redis.call('GET', fence) or '0')
    if current < tonumber(floor) then
      redis.call('SET', fence, floor)
    end
  end
  redis.call('SET', ARGV[i + 1], ARGV[1])
end
return 1
