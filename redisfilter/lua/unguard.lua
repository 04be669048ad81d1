#!lua
-- unguard.lua ends a Put's transaction: if guard.lua refused the Put, it
-- removes the hash the guard left in the bitmap's place and moves the
-- bitmap back; otherwise, for a plain filter, it appends the bits the Put
-- set to the shard's change log (see log.lua), in the same atomic step as
-- the bits, so that a reader of the log misses none.
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the bitmap put into (the shard's, or a window generation's)
-- KEYS[3]  the shard's hold key
-- KEYS[4]  for a plain filter: the shard's change log
-- KEYS[5]  for a plain filter: its state
-- ARGV[1]  for a plain filter: the log's records of the bits the Put set
-- ARGV[2]  for a plain filter: the most bytes the log holds
local bitmap_key, hold_key, log_key, state_key = KEYS[2], KEYS[3], KEYS[4], KEYS[5]
if redis.call('TYPE', bitmap_key).ok == 'hash' then
  local moved = redis.call('HGET', bitmap_key, 'mitzbloom-guard')
  if moved then redis.call('DEL', bitmap_key) end
  if moved == 'moved' then
    redis.call('RENAME', hold_key, bitmap_key)
    redis.call('SET', hold_key, 'mitzbloom')
  end
  return 1
end
if log_key then append_log(log_key, state_key, ARGV[1], tonumber(ARGV[2])) end
return 1
