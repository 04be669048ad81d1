#!lua
-- claim.lua claims a filter of several shards for a creation, in its first
-- shard's config key, before the creation writes any other shard, so that
-- an Open that finds the other shards but no config in the first tells a
-- filter that lost its first shard from one being created. The claim holds
-- until the server's clock passes its deadline: the creation renews it
-- before each shard, and a creation that stops (a crash, a cancelled
-- context) lets another Open take the filter over once it expires. A claim
-- that is live and of another creation is never taken.
--
-- KEYS[1]  the first shard's config key
-- ARGV[1]  the value Open found there, '' for none
-- ARGV[2]  the config of the claiming creation
-- ARGV[3]  how long the claim holds, in milliseconds
-- Returns  {1, the claim written, the server's time}, or
--          {0, the value there now, the server's time}
local config_key = KEYS[1]
local found, config, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])

local cur = redis.call('GET', config_key) or ''
local now = now_ms()
if cur ~= found then return {0, cur, now} end
local deadline, claimed = string.match(cur, '^creating (%d+) (.*)$')
if deadline and claimed ~= config and tonumber(deadline) > now then return {0, cur, now} end
local claim = 'creating ' .. (now + lease) .. ' ' .. config
redis.call('SET', config_key, claim)
return {1, claim, now}
