#!lua flags=no-writes
-- read.lua reads a range of a shard's bitmap, or counts the bits set in it,
-- with the shard's config checked in the same step, for Snapshot and
-- BitCount. A window generation that was not created, or expired, reads
-- as "" (or 0 bits).
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap, or for a window the generation read
-- KEYS[3]  for a window: the record of the shard's generations
-- ARGV[1]  the config the filter was opened with
-- ARGV[2]  the bitmap's length in bytes
-- ARGV[3]  'range' to return the bytes, 'count' to count their bits set
-- ARGV[4]  the first byte of the range
-- ARGV[5]  the last byte of the range
-- ARGV[6]  for a window: the client's time, in Unix milliseconds
local config_key, bitmap_key, gens_key = KEYS[1], KEYS[2], KEYS[3]
local config, nbytes, what, first, last = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]

local err = check_config(config_key, config)
if err then return err end
if gens_key then
  err = check_gens(gens_key)
  if err then return err end
end
local len
err, len = check_bitmap(bitmap_key, nbytes, gens_key, ARGV[6])
if err then return err end
if what == 'count' then
  if len == 0 then return 0 end
  return redis.call('BITCOUNT', bitmap_key, first, last)
end
if len == 0 then return '' end
return redis.call('GETRANGE', bitmap_key, first, last)
