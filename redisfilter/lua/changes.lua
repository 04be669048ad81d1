#!lua flags=no-writes
-- changes.lua reads a shard's change log (see log.lua) from a reader's
-- position on, with the shard's config checked in the same step, for a
-- Hybrid's Sync. The records are those of the log's epoch from the
-- position on, if the log still holds the position: not if its epoch is
-- another (the log was started again), the position is before its first
-- record (the log was trimmed) or after its end (the server lost the
-- log's end).
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap
-- KEYS[3]  the shard's change log
-- KEYS[4]  its state
-- ARGV[1]  the config the filter was opened with
-- ARGV[2]  the bitmap's length in bytes
-- ARGV[3]  the reader's epoch, '' for none
-- ARGV[4]  the reader's position
-- ARGV[5]  the most bytes of records to return
-- ARGV[6]  optional: the first byte of a range of the bitmap to return
-- ARGV[7]  optional: the last byte of that range
-- Returns  {the server's replication ID ('' if INFO is denied), the log's
--          epoch, the position of its first record, of its end, the records
--          from the reader's position on or false, and the range's bytes if
--          asked for}
local config_key, bitmap_key, log_key, state_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local config, nbytes, epoch, pos, most = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])

local err = check_config(config_key, config)
if err then return err end
err = check_bitmap(bitmap_key, nbytes)
if err then return err end
-- A user denied INFO gets no replication ID, and Hybrids of it do not tell
-- a failover that lost bits from one that did not.
local info = redis.pcall('INFO', 'replication')
local replid = type(info) == 'string' and string.match(info, 'master_replid:(%w+)') or ''
local state = redis.call('GET', state_key) or ' 0'
local log_epoch, base = string.match(state, '^(%d*) (%d+)$')
base = tonumber(base)
local last = base + redis.call('STRLEN', log_key)
local records = false
if log_epoch == epoch and pos >= base and pos <= last then
  local upto = math.min(last, pos + most)
  records = ''
  if upto > pos then records = redis.call('GETRANGE', log_key, pos - base, upto - base - 1) end
end
if ARGV[6] then
  return {replid, log_epoch, base, last, records, redis.call('GETRANGE', bitmap_key, ARGV[6], ARGV[7])}
end
return {replid, log_epoch, base, last, records}
