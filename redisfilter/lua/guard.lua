#!lua
-- guard.lua guards the BITFIELD of a Put, which it precedes in a MULTI/EXEC
-- transaction, followed by unguard.lua. If the filter is not the one this
-- process opened, it moves the bitmap to the hold key and leaves a hash in
-- its place, on which the BITFIELD fails with WRONGTYPE, and returns the
-- error: a lost bitmap is never created again piecemeal by a Put, and a
-- filter created again with other parameters never gets this one's bits.
-- For a window, it creates the generation put into if it was never created
-- or expired, recording it with its expiry, so that its loss is told from
-- its absence. It is sent with EVAL, not EVALSHA: a script unknown to the
-- server would fail within the transaction and leave the BITFIELD
-- unguarded.
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap, or for a window the generation put into
-- KEYS[3]  the shard's hold key, which Open creates so that a Put names no
--          missing key (Redis Cluster refuses those with TRYAGAIN while a
--          slot migrates)
-- KEYS[4]  for a window: the record of the shard's generations
-- ARGV[1]  the config the filter was opened with
-- ARGV[2]  the bitmap's length in bytes
-- ARGV[3]  for a window: when the generation expires, in Unix milliseconds
-- ARGV[4]  for a window: the client's time, in Unix milliseconds
local config_key, bitmap_key, hold_key, gens_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local config, nbytes, expire_at, now = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

local function refuse(err)
  local moved = 'none'
  if redis.call('EXISTS', bitmap_key) == 1 then
    redis.call('RENAME', bitmap_key, hold_key)
    moved = 'moved'
  end
  redis.call('HSET', bitmap_key, 'mitzbloom-guard', moved)
  return err
end

local err = check_config(config_key, config)
if err then return refuse(err) end
local len
err, len = check_bitmap(bitmap_key, nbytes, gens_key, now)
if err then return refuse(err) end
if len == 0 then
  redis.call('ZREMRANGEBYSCORE', gens_key, '-inf', now)
  redis.call('SETRANGE', bitmap_key, nbytes - 1, '\0')
  redis.call('PEXPIREAT', bitmap_key, expire_at)
  redis.call('ZADD', gens_key, expire_at, bitmap_key)
end
return 1
