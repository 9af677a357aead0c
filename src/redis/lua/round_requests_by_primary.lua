-- ROUND's requests over every slot one cluster primary serves
-- (docs/design.md#cluster-positions; the script is flagged
-- `allow-cross-slot-keys`, Redis 7 and later): request i's four keys (its
-- lock key, waiting mark, bucket's fence counter and verified marker) and
-- four arguments (its kind, value, and a lock's TTL and holder tag, empty
-- for a release) are ARGV[8i-4] to ARGV[8i+3]; its one declared key, a
-- request's marker, only routes the call to the primary.
--
-- Declared keys would all have to share one slot, so the keys go in ARGV
-- and each request is first asked where its keys live: one `EXISTS` of
-- all four fails (and `redis.pcall` returns the error) exactly when the
-- call would have been refused had they been declared — the slot is
-- served elsewhere, the cluster is down, or the slot is migrating and
-- they are not all on this side (`TRYAGAIN`). Such a request is left
-- untouched and answered -4, and so is every later request on the same
-- lock key (so its release cannot overtake its lock): the daemon sends
-- them again by slot, routed as Redis redirects them.
local replies, moved = {}, {}
for i = 1, (#ARGV - 3) / 8 do
  local at = 8 * i - 4
  local key = ARGV[at]
  if moved[key] or type(redis.pcall('EXISTS', key, ARGV[at + 1], ARGV[at + 2], ARGV[at + 3])) == 'table' then
    moved[key] = true
    replies[i] = -4
  else
    replies[i] = request(key, ARGV[at + 2], string.byte(ARGV[at + 4]), ARGV[at + 5], ARGV[at + 6], ARGV[at + 7])
  end
end
return replies
