#!lua flags=no-writes
-- changes.lua reads a shard's change log (see log.lua) from a reader's
-- position on, with the shard's config checked in the same step, for a
-- Hybrid's Sync. The records are those of the log's epoch from the
-- position on, if the log still holds the position: not if its epoch is
-- another (the log was started again), the position is before its first
-- record (the log was trimmed) or after its end (the server lost the
-- log's end).
--
-- It also answers the log's bytes at the reader's checkpoint, the latest
-- place in the epoch where the reader saw the log (read, or appended to by
-- its own push), so that the reader can tell whether the log still holds
-- what it saw there: a log is only appended to within an epoch, and a slot
-- moved or a failover that lost no write keeps it whole, while a failover
-- or a restart that lost writes lost the log's end with them, and what was
-- appended afterwards lies at the lost positions. And it answers the log's
-- bytes just before the end of what it returns (the log's end if it
-- returns no records), for the reader's next checkpoint.
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap
-- KEYS[3]  the shard's change log
-- ARGV[1]  the config the filter was opened with
-- ARGV[2]  the bitmap's length in bytes
-- ARGV[3]  the reader's epoch, '' for none
-- ARGV[4]  the reader's position
-- ARGV[5]  the most bytes of records to return
-- ARGV[6]  the reader's checkpoint: a position in the log
-- ARGV[7]  how many of the log's bytes before the checkpoint to return
-- ARGV[8]  how many of the log's bytes before the end of the read to return,
--          the log's end if a range of the bitmap is asked for
-- ARGV[9]  optional: the first byte of a range of the bitmap to return
-- ARGV[10] optional: the last byte of that range
-- Returns  {the server's replication ID ('' if INFO is denied), the log's
--          epoch, the position of its first record, of its end, the records
--          from the reader's position on or false, the bytes before the
--          checkpoint or false if the log does not hold them (another
--          epoch, trimmed, or shorter), the bytes before the end of the
--          read ('' if the log holds the checkpoint and the read ends there
--          or before), and the range's bytes if asked for}
local config_key, bitmap_key, log_key = KEYS[1], KEYS[2], KEYS[3]
local config, nbytes, epoch, pos, most = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local check, nheld, ntail = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])

local err = check_config(config_key, config)
if err then return err end
err = check_bitmap(bitmap_key, nbytes)
if err then return err end
local log_epoch, base, last
err, log_epoch, base, last = read_log(log_key)
if err then return err end
-- The replication ID is what a reader goes by when the log no longer
-- holds its checkpoint (see Hybrid). A user denied INFO gets none.
local info = redis.pcall('INFO', 'replication')
local replid = type(info) == 'string' and string.match(info, 'master_replid:(%w+)') or ''
local records, upto = false, last
if log_epoch == epoch and pos >= base and pos <= last then
  upto = math.min(last, pos + most)
  records = log_bytes(log_key, base, pos, upto)
end
local held = false
if log_epoch == epoch and check - nheld >= base and check <= last then
  held = log_bytes(log_key, base, check - nheld, check)
end
-- A reader that read the bitmap takes the log's end; one that holds its
-- checkpoint and read no further keeps it, and needs no tail.
if ARGV[9] then upto = last end
local tail = ''
if not held or upto > check then tail = log_bytes(log_key, base, math.max(base, upto - ntail), upto) end
if ARGV[9] then
  return {replid, log_epoch, base, last, records, held, tail, redis.call('GETRANGE', bitmap_key, ARGV[9], ARGV[10])}
end
return {replid, log_epoch, base, last, records, held, tail}
