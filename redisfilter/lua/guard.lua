#!lua
-- guard.lua guards the BITFIELD of a Put, which it precedes in a MULTI/EXEC
-- transaction, followed by unguard.lua. If the filter is not the one this
-- process opened, or a key of the shard holds what redisfilter did not
-- write, it moves the bitmap aside and leaves a hash of its own in its
-- place, on which the BITFIELD fails with WRONGTYPE, and returns the error
-- (a key of another type than a string needs no moving: the BITFIELD fails
-- on it alike): a lost bitmap is never created again piecemeal by a Put, a
-- filter created again with other parameters never gets this one's bits,
-- and a key that is not redisfilter's is left as it is. The bitmap goes to
-- the hold key, or, if that holds what redisfilter did not write, to a key
-- beside it that does not exist. For a plain filter, it appends to the
-- shard's change log (see log.lua), in the same atomic step as the bits,
-- the bits that the BITFIELD is to set and that are clear, which it reads
-- (nothing runs in between, so that the log has exactly the bits the Put
-- changes), or all of them, for a Put whose values were just read and not
-- found in the filter. For a window, it creates
-- the generation put into if it was never created or expired, recording it
-- with its expiry, so that its loss is told from its absence, and removes
-- from the record the generations it recorded that expired. It is sent
-- with EVAL, not EVALSHA: a script unknown to the server would fail within
-- the transaction and leave the BITFIELD unguarded.
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap, or for a window the generation put into
-- KEYS[3]  the shard's hold key, which Open creates so that a Put names no
--          missing key (Redis Cluster refuses those with TRYAGAIN while a
--          slot migrates)
-- KEYS[4]  for a plain filter: the shard's change log; for a window: the
--          record of the shard's generations
-- ARGV[1]  the config the filter was opened with
-- ARGV[2]  the bitmap's length in bytes
-- ARGV[3]  a token that no other Put uses, which unguard.lua is sent too
-- ARGV[4]  for a plain filter: the log's records of the bits the Put sets;
--          for a window: when the generation expires, in Unix milliseconds
-- ARGV[5]  for a plain filter: the most bytes of records the log holds;
--          for a window: the client's time, in Unix milliseconds
-- ARGV[6]  for a plain filter: 'clear' to log the bits that are clear,
--          'all' to log them all; for a window: its period, in milliseconds
-- ARGV[7]  for a window: its number of generations
local config_key, bitmap_key, hold_key, other_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local config, nbytes, token = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local window = ARGV[7] ~= nil

local function refuse(err)
  local t = redis.call('TYPE', bitmap_key).ok
  if t ~= 'string' and t ~= 'none' then return err end
  local spot = ''
  if t == 'string' then
    spot = hold_key
    local held = redis.pcall('GET', hold_key)
    if type(held) == 'table' or held and held ~= HOLD then
      spot = hold_key .. ':' .. token
      while redis.call('EXISTS', spot) == 1 do spot = spot .. '+' end
    end
    redis.call('RENAME', bitmap_key, spot)
  end
  redis.call('HSET', bitmap_key, 'mitzbloom-guard', token .. ' ' .. spot)
  return err
end

local err = check_config(config_key, config)
if not err then err = check_hold(hold_key) end
if err then return refuse(err) end
if not window then
  local len
  err, len = check_bitmap(bitmap_key, nbytes)
  if err then return refuse(err) end
  local epoch, base
  err, epoch, base = read_log(other_key)
  if err then return refuse(err) end
  local records = ARGV[4]
  if ARGV[6] == 'clear' then records = set_bits(bitmap_key, records, 'GET') end
  append_log(other_key, records, tonumber(ARGV[5]), epoch, base)
  return 1
end
local expire_at, now, period, gens = ARGV[4], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])
err = check_gens(other_key)
if err then return refuse(err) end
local len
err, len = check_bitmap(bitmap_key, nbytes, other_key, now)
if err then return refuse(err) end
if len == 0 then
  -- The generations this window recorded that expired: members named as
  -- its generations are, each with the expiry its number gives.
  local tag = string.match(bitmap_key, '^(.*):%-?%d+$')
  local recorded = redis.call('ZRANGEBYSCORE', other_key, '-inf', now, 'WITHSCORES')
  for i = 1, #recorded, 2 do
    local m = recorded[i]
    local g = string.sub(m, 1, #tag + 1) == tag .. ':' and tonumber(string.match(string.sub(m, #tag + 2), '^%-?%d+$'))
    if g and (g + gens + 1) * period == tonumber(recorded[i + 1]) then
      redis.call('ZREM', other_key, m)
    end
  end
  redis.call('SETRANGE', bitmap_key, nbytes - 1, '\0')
  redis.call('PEXPIREAT', bitmap_key, expire_at)
  redis.call('ZADD', other_key, 0, GENS_MARK, expire_at, bitmap_key)
end
return 1
