-- A missing counter's first value, from the master's clock `t` (`TIME`):
-- its microseconds rounded up to the next multiple of 2^20 (about a
-- second). Never below the clock (docs/design.md#the-fencing-token: the
-- backstop of a master that came back empty), and the same on every
-- master that seeds the bucket within the same second, so the first grant
-- there finds its counters equal and needs no round 2.
local function seed(t)
  return (math.floor((tonumber(t[1]) * 1000000 + tonumber(t[2])) / 1048576) + 1) * 1048576
end
