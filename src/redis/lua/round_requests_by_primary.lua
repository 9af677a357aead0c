-- ROUND's requests over every slot one cluster primary serves
-- (docs/design.md#cluster-positions; the script is flagged
-- `allow-cross-slot-keys`, Redis 7 and later), laid out as
-- `round_requests.lua`'s but in ARGV: ARGV[4] is the requests' kinds, a
-- byte each, ARGV[5] the node ID of the primary the daemon sent them to;
-- then each request in turn, a lock with its lock key, its bucket's fence
-- counter, value, TTL and holder tag, a release with its lock key and
-- value. The one declared key, the first request's bucket marker (which
-- every verified bucket has), only routes the call.
--
-- Declared keys would all have to share one slot, so the keys go in ARGV,
-- and a request whose keys this primary cannot serve now (its slot is
-- served elsewhere, the cluster is down, or the slot is migrating and a
-- key it touches is not on this side) fails at the first `redis.call` on
-- such a key: each request runs under Lua's `pcall`, and one that fails
-- is answered -4, and so is every later request on the same lock key (so
-- its release cannot overtake its lock); the daemon sends them again by
-- slot, routed as Redis redirects them. Before its failing call a request
-- has done at most a lock's `INCR` of a counter that exists (a value not
-- handed out: values are given once, not without gaps), so sending it
-- again is safe. That holds on the primary the batch was sent to, where
-- the call runs without `ASKING`; should Redis redirect the call itself
-- (its routing key is migrating away), it runs elsewhere with `ASKING`,
-- which would let it write keys of an importing slot beside the ones not
-- moved yet: there the node ID differs, and every request is -4 (as it is
-- where the ACL denies `CLUSTER MYID`: docs/configuration.md#redis-acl).
local kinds, replies = ARGV[4], {}
if redis.pcall('CLUSTER', 'MYID') ~= ARGV[5] then
  for i = 1, #kinds do
    replies[i] = -4
  end
  return replies
end
local moved, a = {}, 6
for i = 1, #kinds do
  local kind, key = string.byte(kinds, i), ARGV[a]
  local done, reply = false, nil
  if kind == 76 then
    if not moved[key] then
      done, reply = pcall(request, key, ARGV[a + 1], kind, ARGV[a + 2], ARGV[a + 3], ARGV[a + 4])
    end
    a = a + 5
  else
    if not moved[key] then
      done, reply = pcall(request, key, nil, kind, ARGV[a + 1])
    end
    a = a + 2
  end
  if done then
    replies[i] = reply
  else
    moved[key] = true
    replies[i] = -4
  end
end
return replies
