-- Hand-off (docs/design.md#hand-off): release ARGV[1] and lock ARGV[2] for
-- ARGV[3] ms in one step, for the next waiter of the same daemon. Like
-- ROUND's locks it grants only on a free key (or one it already holds: a
-- re-send), on a verified node, and advances the fence counter; the new
-- value is followed by its holder record (ARGV[5] is the new holder's
-- tag). Replies `{was_held, counter, waited}`: whether ARGV[1] held the
-- key, the new counter (0 = not granted; an unverified node only
-- releases), and whether a daemon other than ARGV[4] (this one's tag) was
-- refused since the last announced release: the mark (KEYS[4], left for
-- the ROUND release that announces) names another daemon or several.
--@seed_from_clock
local found = redis.call('MGET', KEYS[1], KEYS[3], KEYS[2], KEYS[4])
local held, marker = found[1], found[2]
local waited = 0
if found[4] ~= false and found[4] ~= ARGV[4] then
  waited = 1
end
local was = 0
if held ~= false and string.sub(held, 1, #ARGV[1]) == ARGV[1] then
  was = 1
elseif held ~= false and string.sub(held, 1, #ARGV[2]) ~= ARGV[2] then
  return {0, 0, waited}
end
--@check
  if was == 1 then
    redis.call('DEL', KEYS[1])
  end
  return {was, 0, waited}
end
local t = redis.call('TIME')
local counter
if found[3] ~= false then
  counter = redis.call('INCR', KEYS[2])
else
  counter = seed(t)
  redis.call('SET', KEYS[2], string.format('%d', counter))
end
redis.call('SET', KEYS[1], ARGV[2] .. string.format('\n%d\n%d\n', counter,
  tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) .. ARGV[5], 'PX', ARGV[3])
return {was, counter, waited}
