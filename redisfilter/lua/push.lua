#!lua
-- push.lua sets bits of a shard's bitmap for a Hybrid's Sync, with the
-- shard's config checked in the same step, and appends to the shard's
-- change log (see log.lua) those of them it changed. The bits come as the
-- log's records, 4 bytes each: a Sync is paid for by the bytes it moves,
-- and a BITFIELD names a bit in about 40. Bits that were set already are
-- not logged: every write that set them logged them, so the fleet's
-- Hybrids have them or read them.
--
-- KEYS[1]  the shard's config key
-- KEYS[2]  the shard's bitmap
-- KEYS[3]  the shard's change log
-- ARGV[1]  the config the filter was opened with
-- ARGV[2]  the bitmap's length in bytes
-- ARGV[3]  the bits to set, as log records
-- ARGV[4]  the most bytes of records the log holds
-- ARGV[5]  how many of the log's bytes before its end to return
-- ARGV[6]  the pusher's epoch of the log, '' for none
-- ARGV[7]  the pusher's checkpoint: a position in the log
-- ARGV[8]  how many of the log's bytes before the checkpoint to return
-- Returns  {the number of bits it changed, the server's replication ID
--          ('' if INFO is denied), the log's epoch, the position of its end,
--          and its bytes before the end: the pusher's checkpoint (see
--          changes.lua), which a failover that loses this push loses, even
--          if no reader read it back; and the log as the push found it
--          before it appended, which tells the pusher whether the server
--          kept what it saw: the bytes before the pusher's checkpoint, or
--          false if the log did not hold them, its epoch, and the position
--          of its end}
local config_key, bitmap_key, log_key = KEYS[1], KEYS[2], KEYS[3]
local config, nbytes, records, cap, ntail = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local pusher_epoch, check, nheld = ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])

local err = check_config(config_key, config)
if err then return err end
err = check_bitmap(bitmap_key, nbytes)
if err then return err end
local epoch, base, last
err, epoch, base, last = read_log(log_key)
if err then return err end
-- All checked before any is set: a write refused is refused whole.
for i = 1, #records - 3, 4 do
  local off = struct.unpack('>I4', records, i)
  if off >= nbytes * 8 then
    return redis.error_reply('ERR push.lua: bit ' .. off .. ' is past the end of ' .. bitmap_key)
  end
end
-- What the log holds at the pusher's checkpoint, before this push appends:
-- a log that no longer holds it there lost writes the pusher saw, and the
-- pusher must not take a checkpoint past them.
local info = redis.pcall('INFO', 'replication')
local replid = type(info) == 'string' and string.match(info, 'master_replid:(%w+)') or ''
local held = false
if epoch == pusher_epoch and check - nheld >= base and check <= last then
  held = log_bytes(log_key, base, check - nheld, check)
end
local changed = set_bits(bitmap_key, records, 'SET')
append_log(log_key, changed, cap, epoch, base)
local epoch_after, base_after, end_after
err, epoch_after, base_after, end_after = read_log(log_key)
return {#changed / 4, replid, epoch_after, end_after, log_bytes(log_key, base_after, math.max(base_after, end_after - ntail), end_after), held, epoch, last}
