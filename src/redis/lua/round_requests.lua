-- ROUND's requests with their keys declared, all of one slot on a cluster:
-- ARGV[4] is the requests' kinds, a byte each; then each request in turn,
-- a lock with two keys (its lock key, its bucket's fence counter) and three
-- arguments (value, TTL, holder tag), a release with one key and one
-- argument (its lock key, its value).
local kinds, replies, k, a = ARGV[4], {}, 1, 5
for i = 1, #kinds do
  local kind = string.byte(kinds, i)
  if kind == 76 then
    replies[i] = request(KEYS[k], KEYS[k + 1], kind, ARGV[a], ARGV[a + 1], ARGV[a + 2])
    k, a = k + 2, a + 3
  else
    replies[i] = request(KEYS[k], nil, kind, ARGV[a])
    k, a = k + 1, a + 1
  end
end
return replies
