#!lua
-- delete.lua deletes the keys of a shard that redisfilter wrote, as their
-- marks tell (see lib.lua), and leaves the others as they are: a config
-- key that holds a config or a claim, and the bitmap beside it; the hold
-- key; the change log; a window's record of its generations, and the
-- generations it records.
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap, or for a window the record of its
--          generations
-- KEYS[3]  the shard's hold key
-- KEYS[4…] for a plain filter: the shard's change log; for a window: the
--          generations its record held when the client read it
-- ARGV[1]  'bitmap' or 'generations': what KEYS[2] is
-- ARGV[2]  for a window: its period, in milliseconds
-- ARGV[3]  for a window: its number of generations
-- Returns  the keys it left, which hold what redisfilter did not write
local config_key, data_key, hold_key, what = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
local gone, left = {}, {}
local function keep(key)
  if redis.call('EXISTS', key) == 1 then left[#left + 1] = key end
end
local function remove(key, ours)
  if ours then gone[#gone + 1] = key else keep(key) end
end
local cfg = redis.pcall('GET', config_key)
local filter = type(cfg) == 'string' and (string.sub(cfg, 1, 22) == 'mitzbloom/redisfilter ' or string.sub(cfg, 1, 9) == 'creating ')
remove(config_key, filter)
remove(hold_key, not check_hold(hold_key))
if what == 'generations' then
  -- A generation is the window's if its record holds it with the expiry
  -- its number gives, as guard.lua records it.
  local record, period, gens = not check_gens(data_key), tonumber(ARGV[2]), tonumber(ARGV[3])
  for i = 4, #KEYS do
    local g, expires = tonumber(string.match(KEYS[i], ':(%-?%d+)$')), record and redis.call('ZSCORE', data_key, KEYS[i])
    remove(KEYS[i], g and expires and (g + gens + 1) * period == tonumber(expires) and redis.call('TYPE', KEYS[i]).ok == 'string')
  end
  remove(data_key, record)
else
  remove(KEYS[4], not read_log(KEYS[4]))
  remove(data_key, filter and redis.call('TYPE', data_key).ok == 'string')
end
if #gone > 0 then redis.call('DEL', unpack(gone)) end
return left
