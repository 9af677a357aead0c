-- Reads keys ARGV[i] of slots this primary serves (their names are not
-- declared). Replies one value per key. A script may touch undeclared keys
-- of other slots of its node: on Redis 7 and later only with the flag
-- `allow-cross-slot-keys` (`bulk_script`), before 7 always (and a flags
-- line does not compile there).
local values = {}
for i, key in ipairs(ARGV) do
  values[i] = redis.call('GET', key)
end
return values
