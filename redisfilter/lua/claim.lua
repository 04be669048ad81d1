#!lua
-- claim.lua claims a filter of several shards for a creation, in its first
-- shard's config key, before the creation writes any other shard, so that
-- an Open that finds the other shards but no config in the first tells a
-- filter that lost its first shard from one being created. A claim is
-- "creating <token> <config>": the creation renews it with a new token
-- (when the claim lapses by the client's clock, which the releases before
-- compared with the server's) before each shard, and an Open that finds a claim waits while it
-- changes, and takes it over once it has seen it unchanged for a lease
-- (5 s), by its own clock, or at once if its token is 0, which a creation
-- that gave up (its context was cancelled) writes. The servers' clocks are
-- never read: TIME is in no ACL category but @fast. A claim is only ever
-- replaced by one that found it as it is, so a creation that renewed its
-- claim meanwhile is never taken over.
--
-- KEYS[1]  the first shard's config key
-- ARGV[1]  the value Open found there, '' for none
-- ARGV[2]  the config of the claiming creation
-- ARGV[3]  the claim's token: digits, 0 to give the claim up
-- Returns  {1, the claim written}, or {0, the value there now}
local config_key = KEYS[1]
local found, config, token = ARGV[1], ARGV[2], ARGV[3]

-- A config key that exists, even empty, is not the missing one Open found.
local cur = redis.call('GET', config_key)
if (cur or '') ~= found or cur == '' then return {0, cur or ''} end
local claim = 'creating ' .. token .. ' ' .. config
redis.call('SET', config_key, claim)
return {1, claim}
