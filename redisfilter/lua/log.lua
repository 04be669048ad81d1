-- log.lua: the functions of a shard's change log, which the scripts that
-- set a plain filter's bits or read its log share (see changes.go). The
-- log is the string {tag}:changes: a header of LOG_HEADER bytes,
-- "mitzbloom/changes <epoch> <base>\n", with the log's epoch in 15 digits
-- and the position of its first record in 16, and then the records, each
-- the offset in the shard's bitmap of a bit set, 4 bytes big-endian, oldest
-- first. Positions count bytes of records from the log's creation; a new
-- epoch means a new log, whose positions do not continue the old one's.
-- The header is the log's mark: a string without it is not redisfilter's.
-- Numbers are written with %.0f, which Lua's own conversion (%.14g) would
-- write in exponent form from 1e14 on.

local LOG_HEADER = 51
local LOG_PATTERN = '^mitzbloom/changes (' .. string.rep('%d', 15) .. ') (' .. string.rep('%d', 16) .. ')\n$'

-- log_header returns the header of a log of epoch whose first record is at
-- base.
local function log_header(epoch, base)
  return string.format('mitzbloom/changes %015.0f %016.0f\n', tonumber(epoch), base)
end

-- read_log returns the error reply for the log key if it holds what
-- redisfilter did not write, or nil and the log's epoch ('' if there is no
-- log), and the positions of its first record and of its end.
local function read_log(key)
  local h = redis.pcall('GETRANGE', key, 0, LOG_HEADER - 1)
  if type(h) == 'table' then return problem('WRONGTYPE', key, h.err) end
  if h == '' and redis.call('EXISTS', key) == 0 then return nil, '', 0, 0 end
  local epoch, base = string.match(h, LOG_PATTERN)
  if not epoch then return foreign(key) end
  base = tonumber(base)
  return nil, epoch, base, base + redis.call('STRLEN', key) - LOG_HEADER
end

-- log_bytes returns the log's records from position from to position to,
-- of a log whose first record is at base.
local function log_bytes(key, base, from, to)
  if to <= from then return '' end
  return redis.call('GETRANGE', key, LOG_HEADER + from - base, LOG_HEADER + to - base - 1)
end

-- reset_log starts the log again, empty, in a new epoch, a random number of
-- at most 15 digits that the client draws (TIME, which would do, is in no
-- ACL category but @fast): readers whose position is of the old one read
-- the whole shard instead.
local function reset_log(key, epoch)
  redis.call('SET', key, log_header(epoch, 0))
end

-- append_log appends records to the log, which read_log found of epoch
-- (starting it if there is none, in an epoch drawn from what is appended:
-- it was deleted by hand, or evicted) with its first record at base; and
-- drops its oldest records, down to half of cap, when it would hold more
-- than cap bytes of them.
local function append_log(key, records, cap, epoch, base)
  if #records == 0 then return end
  if epoch == '' then
    epoch, base = string.format('%.0f', tonumber(string.sub(redis.sha1hex(key .. records), 1, 12), 16)), 0
    reset_log(key, epoch)
  end
  local len = redis.call('APPEND', key, records) - LOG_HEADER
  if len > cap then
    local cut = len - math.floor(cap / 8) * 4
    redis.call('SET', key, log_header(epoch, base + cut) .. redis.call('GETRANGE', key, LOG_HEADER + cut, -1))
  end
end

-- set_bits runs BITFIELD op ('GET' to read them, 'SET' to set them) on the
-- bits that records name, in groups, and returns the records of those that
-- were clear, each once. A BITFIELD of many bits is about twice as fast as
-- a call per bit.
local function set_bits(key, records, op)
  local out, seen, group, n = {}, {}, 256, #records / 4
  for first = 1, n, group do
    local last = math.min(first + group - 1, n)
    local args, at = {}, 0
    for i = first, last do
      args[at + 1], args[at + 2], args[at + 3] = op, 'u1', struct.unpack('>I4', records, 4 * i - 3)
      at = at + 3
      if op == 'SET' then
        args[at + 1] = 1
        at = at + 1
      end
    end
    local old = redis.call('BITFIELD', key, unpack(args))
    for i = first, last do
      local r = string.sub(records, 4 * i - 3, 4 * i)
      if old[i - first + 1] == 0 and not seen[r] then
        seen[r] = true
        out[#out + 1] = r
      end
    end
  end
  return table.concat(out)
end
