-- Per member four keys: its lock key, its waiting mark, and its bucket's
-- fence counter and verified marker (docs/design.md#keys). ARGV: the
-- value, the TTL (ms), the holder tag, this daemon's tag (for waiting
-- marks), how long (ms) a lock refused by readers keeps new ones out.
--
-- Every member must be free or hold the value already (a re-send), else
-- nothing is written but the waiting marks of the members held by others
-- (as ROUND's refusals write them) and the reply is `{0}`. On a node this
-- process verified in every member's bucket (as ROUND checks: `{-1}`,
-- `{-2}`), each member takes the next counter value of its bucket (seeded
-- from the clock; `{-3}` at 2^53) and its holder record, and the reply is
-- `{1, counter per member}`.
--@seed_from_clock
local value, ttl, tag = ARGV[1], ARGV[2], ARGV[4]
local refused = false
for i = 1, #KEYS, 4 do
  local held = redis.call('GET', KEYS[i])
  if held and string.sub(held, 1, #value) ~= value then
    refused = true
    local mark = redis.call('GET', KEYS[i + 1])
    local who = tag
    if mark ~= false and mark ~= tag then
      who = '*'
    end
    if string.sub(held, 1, 7) == '\tshared' then
      local t = redis.call('TIME')
      who = string.format('W%d:', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[5])) .. who
    end
    redis.call('SET', KEYS[i + 1], who, 'PX', tonumber(ttl) + 10000)
  end
end
if refused then
  return {0}
end
--@run_id_from_info
local t = redis.call('TIME')
local counters = {}
for i = 1, #KEYS, 4 do
  local fence = KEYS[i + 2]
  if counters[fence] == nil then
    local head = redis.call('MGET', KEYS[i + 3], fence)
    if head[1] == false then
      return {-1}
    end
    if not run_id or string.sub(head[1], 1, #run_id + 1) ~= run_id .. ':' then
      return {-2}
    end
    if head[2] == false then
      counters[fence] = seed(t) - 1
    else
      counters[fence] = tonumber(head[2])
    end
  end
  if counters[fence] + #KEYS / 4 >= 9007199254740992 then
    return {-3}
  end
end
local now_ms = string.format('\n%d\n', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local replies = {1}
for i = 1, #KEYS, 4 do
  local fence = KEYS[i + 2]
  counters[fence] = counters[fence] + 1
  redis.call('SET', KEYS[i], value .. string.format('\n%d', counters[fence]) .. now_ms .. ARGV[3], 'PX', ttl)
  replies[#replies + 1] = counters[fence]
end
for fence, counter in pairs(counters) do
  redis.call('SET', fence, string.format('%d', counter))
end
return replies
