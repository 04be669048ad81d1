#!lua
-- create.lua writes a shard's config key, and the hold key that guard.lua
-- moves a bitmap to, and for a plain filter creates the shard's bitmap at
-- its full size if it is missing, if the shard is still as Open found it
-- with inspect.lua: if not, another process changed it meanwhile, and it
-- returns {0, the config now} for Open to look again. If a key it would
-- write holds what redisfilter did not write, it writes nothing and returns
-- the error of check_owned (see lib.lua). It never deletes or shortens a
-- bitmap: one there keeps its bits. For a plain filter it starts
-- the shard's change log again (see log.lua), unless the shard had a config
-- and keeps its bitmap, whose log goes on.
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap, or for a window the record of its
--          generations
-- KEYS[3]  the shard's hold key
-- KEYS[4]  for a plain filter: the shard's change log
-- KEYS[5]  for a plain filter: its state
-- ARGV[1]  the value of the config key Open found, '' for none
-- ARGV[2]  the config to write
-- ARGV[3]  the bitmap's length in bytes
-- ARGV[4]  the length of KEYS[2] Open found (see inspect.lua)
-- ARGV[5]  'create' to create the bitmap, 'adopt' to keep the one there
--          and start its log again, 'keep' to keep it and its log,
--          'generations' for a window, whose Puts create its bitmaps
-- ARGV[6]  the epoch of the log it starts (see log.lua)
-- Returns  {1, the config written}, or {0, the config now}
local config_key, data_key, hold_key, log_key, state_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local found, config, nbytes, found_len, bitmap = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]

local cfg = redis.call('GET', config_key) or ''
if cfg ~= found then return {0, cfg} end
local err
if bitmap == 'generations' then err = check_owned(hold_key) else err = check_owned(hold_key, log_key, state_key) end
if err then return err end
if bitmap ~= 'generations' then
  if redis.call('STRLEN', data_key) ~= found_len then return {0, cfg} end
  if bitmap == 'create' then
    if found_len ~= 0 then return redis.error_reply('ERR create.lua: ' .. data_key .. ' exists') end
    redis.call('SETRANGE', data_key, nbytes - 1, '\0')
  end
  if bitmap ~= 'keep' then reset_log(log_key, state_key, ARGV[6]) end
end
redis.call('SET', config_key, config)
redis.call('SET', hold_key, 'mitzbloom')
return {1, config}
