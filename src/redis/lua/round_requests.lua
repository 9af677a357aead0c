-- ROUND's requests with their keys declared, all of one slot on a cluster:
-- request i's keys are KEYS[4i-3] to KEYS[4i], its arguments ARGV[4i] to
-- ARGV[4i+3].
local replies = {}
for i = 1, #KEYS / 4 do
  replies[i] = request(KEYS[4 * i - 3], KEYS[4 * i - 2], KEYS[4 * i - 1], KEYS[4 * i],
    ARGV[4 * i], ARGV[4 * i + 1], ARGV[4 * i + 2], ARGV[4 * i + 3])
end
return replies
