#!lua
-- merge.lua ORs a range of a local filter's bits into a shard's bitmap, with
-- the shard's config checked in the same step, for Merge. BITOP works on
-- whole keys only, so it ORs through two temporary keys in the shard's
-- slot, which it deletes.
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap
-- KEYS[3]  a temporary key
-- KEYS[4]  another temporary key
-- ARGV[1]  the config the filter was opened with
-- ARGV[2]  the bitmap's length in bytes
-- ARGV[3]  the offset of the range in the bitmap, in bytes
-- ARGV[4]  the bits to OR in
local config_key, bitmap_key, tmp_a, tmp_b = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local config, nbytes, from, bits = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]

local err = check_config(config_key, config)
if err then return err end
err = check_bitmap(bitmap_key, nbytes)
if err then return err end
redis.call('SET', tmp_a, redis.call('GETRANGE', bitmap_key, from, from + #bits - 1))
redis.call('SET', tmp_b, bits)
redis.call('BITOP', 'OR', tmp_a, tmp_a, tmp_b)
redis.call('SETRANGE', bitmap_key, from, redis.call('GET', tmp_a))
redis.call('DEL', tmp_a, tmp_b)
return 'OK'
