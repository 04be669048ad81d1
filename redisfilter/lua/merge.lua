#!lua
-- merge.lua ORs a range of a local filter's bits into a shard's bitmap, with
-- the shard's config checked in the same step, for Merge, and appends the
-- bits it changed to the shard's change log (see log.lua): each, if they are
-- few, or else it starts the log again, so that its readers read the whole
-- shard. BITOP works on whole keys only, so it ORs through two temporary
-- keys in the shard's slot, of names no other Merge uses, which it deletes;
-- if either exists, it holds what redisfilter did not write, and the merge
-- is refused.
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap
-- KEYS[3]  a temporary key
-- KEYS[4]  another temporary key
-- KEYS[5]  the shard's change log
-- ARGV[1]  the config the filter was opened with
-- ARGV[2]  the bitmap's length in bytes
-- ARGV[3]  the offset of the range in the bitmap, in bytes
-- ARGV[4]  the bits to OR in
-- ARGV[5]  the most bytes of records the log holds
-- ARGV[6]  the most bits changed that it logs one by one
-- ARGV[7]  the epoch of the log it starts if more changed (see log.lua)
local config_key, bitmap_key, old, new, log_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local config, nbytes, from, bits, cap, most = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])

local err = check_config(config_key, config)
if err then return err end
err = check_bitmap(bitmap_key, nbytes)
if err then return err end
local epoch, base
err, epoch, base = read_log(log_key)
if err then return err end
for _, k in ipairs({old, new}) do
  if redis.call('EXISTS', k) == 1 then return foreign(k) end
end
redis.call('SET', old, redis.call('GETRANGE', bitmap_key, from, from + #bits - 1))
redis.call('SET', new, bits)
redis.call('BITOP', 'OR', new, new, old)
redis.call('BITOP', 'XOR', old, old, new)
local changed = redis.call('BITCOUNT', old)
if changed > 0 then
  redis.call('SETRANGE', bitmap_key, from, redis.call('GET', new))
  if changed > most then
    reset_log(log_key, ARGV[7])
  else
    local records, at = {}, 0
    for _ = 1, changed do
      at = redis.call('BITPOS', old, 1, at, -1, 'BIT')
      records[#records + 1] = struct.pack('>I4', from * 8 + at)
      at = at + 1
    end
    append_log(log_key, table.concat(records), cap, epoch, base)
  end
end
redis.call('DEL', old, new)
return changed
