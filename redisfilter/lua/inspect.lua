#!lua flags=no-writes
-- inspect.lua reads what Open needs to know of a shard, without writing, so
-- that a read-only user can open an existing filter: its config, the
-- length of its bitmap or, for a window, the number of generations its
-- record holds. It refuses a shard any of whose keys that Open would write
-- holds what redisfilter did not write (see lib.lua), so that Open writes
-- nothing over it.
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap, or for a window the record of its
--          generations
-- KEYS[3]  the shard's hold key
-- KEYS[4]  for a plain filter: the shard's change log
-- ARGV[1]  'bitmap' or 'generations': what KEYS[2] is
-- Returns  {the config or false, the length or the number of generations}
local config_key, data_key, hold_key, log_key, what = KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1]
local cfg = redis.pcall('GET', config_key)
if type(cfg) == 'table' then return problem('WRONGTYPE', config_key, cfg.err) end
if cfg == '' then return foreign(config_key) end
local n, err
if what == 'generations' then
  err = check_gens(data_key)
  if err then return err end
  n = math.max(redis.call('ZCARD', data_key) - 1, 0)
else
  n = redis.pcall('STRLEN', data_key)
  if type(n) == 'table' then return problem('WRONGTYPE', data_key, n.err) end
  if n == 0 and redis.call('EXISTS', data_key) == 1 then return foreign(data_key) end
  err = read_log(log_key)
  if err then return err end
end
err = check_hold(hold_key)
if err then return err end
return {cfg, n}
