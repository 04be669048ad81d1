-- log.lua: the functions of a shard's change log, which the scripts that
-- set a plain filter's bits share (see changes.go). The log is the string
-- {tag}:changes, of records, each the offset in the shard's bitmap of a bit
-- set, 4 bytes big-endian, oldest first, and {tag}:changes-state, its epoch
-- and the position of its first record, "<epoch> <base>". Positions count
-- bytes from the log's creation; a new epoch means a new log, whose
-- positions do not continue the old one's.

-- reset_log starts the log again, empty, in a new epoch, a random number of
-- digits that the client draws (TIME, which would do, is in no ACL category
-- but @fast): readers whose position is of the old one read the whole
-- shard instead.
local function reset_log(log_key, state_key, epoch)
  redis.call('SET', log_key, '')
  redis.call('SET', state_key, epoch .. ' 0')
end

-- append_log appends records to the log, starting it if it is missing, and
-- drops its oldest records, down to half of cap, when it would hold more
-- than cap bytes.
local function append_log(log_key, state_key, records, cap)
  if #records == 0 then return end
  local state = redis.call('GET', state_key)
  if not state then
    -- Deleted by hand, or evicted: an epoch drawn from what is appended.
    reset_log(log_key, state_key, string.format('%.0f', tonumber(string.sub(redis.sha1hex(state_key .. records), 1, 12), 16)))
    state = redis.call('GET', state_key)
  end
  local len = redis.call('APPEND', log_key, records)
  if len > cap then
    local cut = len - math.floor(cap / 8) * 4
    local epoch, base = string.match(state, '^(%d+) (%d+)$')
    redis.call('SET', log_key, redis.call('GETRANGE', log_key, cut, -1))
    redis.call('SET', state_key, epoch .. ' ' .. (tonumber(base) + cut))
  end
end
