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
-- KEYS[4]  its state
-- ARGV[1]  the config the filter was opened with
-- ARGV[2]  the bitmap's length in bytes
-- ARGV[3]  the bits to set, as log records
-- ARGV[4]  the most bytes the log holds
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
local config_key, bitmap_key, log_key, state_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local config, nbytes, records, cap, ntail = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local pusher_epoch, check, nheld = ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])

local err = check_config(config_key, config)
if err then return err end
err = check_bitmap(bitmap_key, nbytes)
if err then return err end
-- All checked before any is set: a write refused is refused whole.
local offsets = {}
for i = 1, #records - 3, 4 do
  offsets[#offsets + 1] = struct.unpack('>I4', records, i)
  if offsets[#offsets] >= nbytes * 8 then
    return redis.error_reply('ERR push.lua: bit ' .. offsets[#offsets] .. ' is past the end of ' .. bitmap_key)
  end
end
-- The log as it is before this push appends, and what it holds at the
-- pusher's checkpoint: a log that no longer holds it there lost writes the
-- pusher saw, and the pusher must not take a checkpoint past them.
local function log_state()
  local state = redis.call('GET', state_key) or ' 0'
  local epoch, base = string.match(state, '^(%d*) (%d+)$')
  return epoch, tonumber(base), redis.call('STRLEN', log_key)
end
local info = redis.pcall('INFO', 'replication')
local replid = type(info) == 'string' and string.match(info, 'master_replid:(%w+)') or ''
local epoch_before, base_before, len_before = log_state()
local held = false
if epoch_before == pusher_epoch and check - nheld >= base_before and check <= base_before + len_before then
  held = ''
  if nheld > 0 then held = redis.call('GETRANGE', log_key, check - nheld - base_before, check - base_before - 1) end
end
-- BITFIELD sets a group of bits in one call, about twice as fast as a
-- SETBIT each, and answers each bit's old value.
local changed, group = {}, 256
for first = 1, #offsets, group do
  local last = math.min(first + group - 1, #offsets)
  local args = {}
  for i = first, last do
    local at = 4 * (i - first)
    args[at + 1], args[at + 2], args[at + 3], args[at + 4] = 'SET', 'u1', offsets[i], 1
  end
  local old = redis.call('BITFIELD', bitmap_key, unpack(args))
  for i = first, last do
    if old[i - first + 1] == 0 then
      changed[#changed + 1] = string.sub(records, 4 * i - 3, 4 * i)
    end
  end
end
append_log(log_key, state_key, table.concat(changed), cap)
local epoch, base, len = log_state()
return {#changed, replid, epoch, base + len, redis.call('GETRANGE', log_key, math.max(0, len - ntail), -1), held, epoch_before, base_before + len_before}
