-- lib.lua: the functions that the scripts checking a filter's keys share.
-- scripts.go puts them after the first line (the shebang) of each script
-- that calls check_config, and sends every script without its comment
-- lines, which Redis would otherwise hash and parse at every EVAL.

-- No script calls TIME, which ACL categories other than @fast leave out:
-- the time a window's generations are measured by is the client's, as in
-- its reads, and a claim lasts while it changes (see claim.lua).

-- problem returns the error reply of a failed check of key: a code that
-- errors.go's table maps to a sentinel, the key, and a detail.
local function problem(code, key, detail)
  return redis.error_reply('MITZBLOOM_' .. code .. ' ' .. key .. ' ' .. (detail or ''))
end

-- check_config returns the error reply for the config key key if it does
-- not hold want, the config a process opened the filter with, or nil. A
-- filter's identity never comes back once it changed, so a filter created
-- again, even with the same parameters, fails the check.
local function check_config(key, want)
  local cfg = redis.pcall('GET', key)
  if type(cfg) == 'table' then return problem('WRONGTYPE', key, cfg.err) end
  if not cfg then return problem('NOCONFIG', key) end
  if cfg ~= want then return problem('CONFIG', key, cfg) end
  return nil
end

-- check_bitmap returns the error reply for the bitmap key if it is not one
-- of nbytes bytes, or nil, and its length. A missing bitmap is lost for a
-- plain filter (gens_key is nil); a missing window generation is lost if
-- the record gens_key holds it with an expiry after now (Unix ms), and
-- otherwise not created yet, or expired.
local function check_bitmap(key, nbytes, gens_key, now)
  local len = redis.pcall('STRLEN', key)
  if type(len) == 'table' then return problem('WRONGTYPE', key, len.err), 0 end
  if len == nbytes then return nil, len end
  if len ~= 0 then return problem('LENGTH', key, len .. ' ' .. nbytes), len end
  if not gens_key then return problem('NOBITMAP', key), 0 end
  local expires = redis.call('ZSCORE', gens_key, key)
  if expires and tonumber(now) < tonumber(expires) then return problem('NOGENERATION', key), 0 end
  return nil, 0
end

-- check_owned returns the error reply for the first of a shard's keys that
-- Open writes beside its config and bitmap, if it holds something that
-- redisfilter did not write there, or nil: the hold key holds
-- 'mitzbloom', the change log 4-byte records, and its state
-- "<epoch> <position>". log_key and state_key are nil for a window, which
-- has no log.
local function check_owned(hold_key, log_key, state_key)
  local keys = {hold_key, log_key, state_key}
  for i = 1, 3 do
    local key = keys[i]
    if key then
      -- The log may be long: its length, not its value, is read.
      local cmd = 'GET'
      if i == 2 then cmd = 'STRLEN' end
      local v = redis.pcall(cmd, key)
      if type(v) == 'table' then return problem('WRONGTYPE', key, v.err) end
      local n, ours = v, true
      if i == 1 and v then n, ours = #v, v == 'mitzbloom' end
      if i == 2 then ours = v % 4 == 0 end
      if i == 3 and v then n, ours = #v, string.match(v, '^%d* %d+$') ~= nil end
      if not ours then return problem('FOREIGN', key, 'holds a string of ' .. n .. ' bytes') end
    end
  end
  return nil
end
