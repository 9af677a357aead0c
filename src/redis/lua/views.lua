-- Listing (docs/design.md#listing-and-force-release): for each lock key
-- KEYS[i], what it holds (value and holder record) and its time left (ms);
-- two replies per lock, in order.
local views = {}
for i, key in ipairs(KEYS) do
  views[2 * i - 1] = redis.call('GET', key)
  views[2 * i] = redis.call('PTTL', key)
end
return views
