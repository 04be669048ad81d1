#!lua flags=no-writes
-- inspect.lua reads what Open needs to know of a shard, without writing, so
-- that a read-only user can open an existing filter: its config, the
-- length of its bitmap or, for a window, the number of generations its
-- record holds. It refuses a shard any of whose keys that Open
-- would write holds what redisfilter did not write (see check_owned), so
-- that Open writes nothing over it.
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap, or for a window the record of its
--          generations
-- KEYS[3]  the shard's hold key
-- KEYS[4]  for a plain filter: the shard's change log
-- KEYS[5]  for a plain filter: its state
-- ARGV[1]  'bitmap' or 'generations': what KEYS[2] is
-- Returns  {the config or false, the length or the number of generations}
local config_key, data_key, what = KEYS[1], KEYS[2], ARGV[1]
local cfg = redis.pcall('GET', config_key)
if type(cfg) == 'table' then return problem('WRONGTYPE', config_key, cfg.err) end
local n
if what == 'generations' then n = redis.pcall('ZCARD', data_key) else n = redis.pcall('STRLEN', data_key) end
if type(n) == 'table' then return problem('WRONGTYPE', data_key, n.err) end
local err = check_owned(KEYS[3], KEYS[4], KEYS[5])
if err then return err end
return {cfg, n}
