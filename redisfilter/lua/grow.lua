#!lua
-- grow.lua grows the new bitmap of a shard being created by one step, so
-- that no command holds the server for long: a string of n bytes costs
-- Redis about a millisecond per MiB to create at once. It only ever adds
-- zeroed bytes after the string's end, and the key expires unless the
-- creation goes on, so that an abandoned creation leaves nothing behind.
--
-- KEYS[1]  the new bitmap, {tag}:new:<creation id>
-- ARGV[1]  its length after this step, in bytes
-- ARGV[2]  how long it lives without another step, in milliseconds
-- Returns  its length
local key, len, ttl = KEYS[1], tonumber(ARGV[1]), ARGV[2]
if redis.call('STRLEN', key) < len then redis.call('SETRANGE', key, len - 1, '\0') end
redis.call('PEXPIRE', key, ttl)
return redis.call('STRLEN', key)
