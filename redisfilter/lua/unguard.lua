#!lua
-- unguard.lua ends a Put's transaction: if guard.lua refused the Put, it
-- removes the hash the guard left in the bitmap's place, which holds the
-- Put's token, and moves the bitmap back from where the guard moved it,
-- and the hold key, if that is where, is made again. A hash without the
-- token is not the guard's, and is left as it is.
--
-- KEYS[1]  the bitmap put into (the shard's, or a window generation's)
-- KEYS[2]  the shard's hold key
-- ARGV[1]  the token the Put sent guard.lua
local bitmap_key, hold_key, token = KEYS[1], KEYS[2], ARGV[1]
if redis.call('TYPE', bitmap_key).ok ~= 'hash' then return 1 end
local mark = redis.call('HGET', bitmap_key, 'mitzbloom-guard')
if not mark or string.sub(mark, 1, #token + 1) ~= token .. ' ' then return 1 end
local spot = string.sub(mark, #token + 2)
redis.call('DEL', bitmap_key)
if spot ~= '' then
  redis.call('RENAME', spot, bitmap_key)
  if spot == hold_key then redis.call('SET', hold_key, HOLD) end
end
return 1
