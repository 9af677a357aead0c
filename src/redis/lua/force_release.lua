-- Force release (docs/design.md#listing-and-force-release): delete the
-- lock key KEYS[1] whatever it holds, with its waiting mark (KEYS[4]), and
-- announce it (ARGV[2], `PUBLISH` or `SPUBLISH`) on its bucket's channel
-- ARGV[1] so waiters try at once. The fence counter (KEYS[2]) is left as
-- it is. Replies 1 when the key was held.
local held = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[4])
redis.call(ARGV[2], ARGV[1], KEYS[1])
return held
