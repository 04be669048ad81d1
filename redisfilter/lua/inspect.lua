#!lua flags=no-writes
-- inspect.lua reads what Open needs to know of a shard, without writing, so
-- that a read-only user can open an existing filter: its config, the
-- length of its bitmap or, for a window, the number of generations its
-- record holds, and the server's time, which a claim's lease is measured
-- by (see claim.lua).
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap, or for a window the record of its
--          generations
-- ARGV[1]  'bitmap' or 'generations': what KEYS[2] is
-- Returns  {the config or false, the length or the number of generations,
--          the server's time in Unix milliseconds}
local config_key, data_key, what = KEYS[1], KEYS[2], ARGV[1]
local cfg = redis.call('GET', config_key)
local n
if what == 'generations' then n = redis.call('ZCARD', data_key) else n = redis.call('STRLEN', data_key) end
return {cfg, n, now_ms()}
