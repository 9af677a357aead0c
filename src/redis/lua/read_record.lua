-- An election's lock and its record (docs/design.md#elections), read in
-- one step. KEYS[1] the lock, KEYS[2] the record: both, as they are.
return {redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2])}
