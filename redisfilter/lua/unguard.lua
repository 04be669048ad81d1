#!lua
-- unguard.lua ends a Put's transaction: if guard.lua refused the Put, it
-- removes the hash the guard left in the bitmap's place and moves the
-- bitmap back.
--
-- KEYS     those of guard.lua
local bitmap_key, hold_key = KEYS[2], KEYS[3]
if redis.call('TYPE', bitmap_key).ok == 'hash' then
  local moved = redis.call('HGET', bitmap_key, 'mitzbloom-guard')
  if moved then redis.call('DEL', bitmap_key) end
  if moved == 'moved' then
    redis.call('RENAME', hold_key, bitmap_key)
    redis.call('SET', hold_key, 'mitzbloom')
  end
end
return 1
