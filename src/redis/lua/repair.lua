-- Counter repair before a quarantined node rejoins (docs/design.md#repair), for
-- a run of buckets: bucket i's fence counter KEYS[2i-1] is raised to at
-- least ARGV[i+1] (the max read from a quorum of the others; empty = no
-- raise), and its marker KEYS[2i] set to ARGV[1], the identity
-- (`run_id:master_replid`) of the process whose data is now vouched for.
for i = 1, #KEYS / 2 do
  local floor = ARGV[i + 1]
  if floor ~= '' then
    local current = tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0')
    if current < tonumber(floor) then
      redis.call('SET', KEYS[2 * i - 1], floor)
    end
  end
  redis.call('SET', KEYS[2 * i], ARGV[1])
end
return 1
