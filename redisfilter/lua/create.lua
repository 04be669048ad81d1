#!lua
-- create.lua writes a shard's config key, and the hold key that guard.lua
-- moves a bitmap to, and for a plain filter creates the shard's bitmap at
-- its full size if it is missing, if the shard is still as Open found it
-- with inspect.lua: if not, another process changed it meanwhile, and it
-- returns {0, the config now} for Open to look again. If a key it would
-- write holds what redisfilter did not write, it writes nothing and returns
-- the error (see lib.lua). It never deletes or shortens a bitmap: one there
-- keeps its bits. For a plain filter it starts the shard's change log again
-- (see log.lua), unless the shard had a config and keeps its bitmap, whose
-- log goes on; for a window it creates the record of its generations,
-- with its mark, if there is none.
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap, or for a window the record of its
--          generations
-- KEYS[3]  the shard's hold key
-- KEYS[4]  for a plain filter: the shard's change log
-- ARGV[1]  the value of the config key Open found, '' for none
-- ARGV[2]  the config to write
-- ARGV[3]  the bitmap's length in bytes
-- ARGV[4]  the length of KEYS[2] Open found (see inspect.lua)
-- ARGV[5]  'create' to create the bitmap, 'adopt' to keep the one there
--          and start its log again, 'keep' to keep it and its log,
--          'generations' for a window, whose Puts create its bitmaps
-- ARGV[6]  the epoch of the log it starts (see log.lua)
-- Returns  {1, the config written}, or {0, the config now}
local config_key, data_key, hold_key, log_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local found, config, nbytes, found_len, what = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]

-- A config key that exists, even empty, is not the missing one Open found.
local cfg = redis.pcall('GET', config_key)
if type(cfg) == 'table' then return problem('WRONGTYPE', config_key, cfg.err) end
if (cfg or '') ~= found or cfg == '' then return {0, cfg or ''} end
local err = check_hold(hold_key)
if err then return err end
if what == 'generations' then
  err = check_gens(data_key)
  if err then return err end
  redis.call('ZADD', data_key, 'NX', 0, GENS_MARK)
else
  local epoch
  err, epoch = read_log(log_key)
  if err then return err end
  local len = redis.pcall('STRLEN', data_key)
  if type(len) == 'table' then return problem('WRONGTYPE', data_key, len.err) end
  if len ~= found_len then return {0, cfg or ''} end
  if what == 'create' then
    if redis.call('EXISTS', data_key) == 1 then return foreign(data_key) end
    redis.call('SETRANGE', data_key, nbytes - 1, '\0')
  end
  if what ~= 'keep' or epoch == '' then reset_log(log_key, ARGV[6]) end
end
redis.call('SET', config_key, config)
redis.call('SET', hold_key, HOLD)
return {1, config}
