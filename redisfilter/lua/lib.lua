-- lib.lua: the functions that the scripts checking a filter's keys share.
-- scripts.go puts them after the first line (the shebang) of each script
-- that calls check_config, and sends every script without its comment
-- lines, which Redis would otherwise hash and parse at every EVAL.

-- No script calls TIME, which ACL categories other than @fast leave out:
-- the time a window's generations are measured by is the client's, as in
-- its reads, and a claim lasts while it changes (see claim.lua).

-- A script writes a key only if redisfilter wrote it, as told by a mark
-- that redisfilter writes, checked in the same step as the write: the
-- config key holds a config (or a claim), whose creation id the calls
-- compare; a shard's bitmap is the one its config key's creation names; a
-- window's generations are the bitmaps its record (a sorted set with the
-- member GENS_MARK) holds; the hold key holds HOLD; the change log starts
-- with its header (see log.lua). A key that holds anything else is
-- reported, with the problem FOREIGN or WRONGTYPE, and left as it is.

-- HOLD is what a shard's hold key holds while no bitmap is moved there.
local HOLD = 'mitzbloom'

-- GENS_MARK is the member, of score 0, of a window's record of its
-- generations that makes the record redisfilter's.
local GENS_MARK = 'mitzbloom/redisfilter'

-- problem returns the error reply of a failed check of key: a code that
-- errors.go's table maps to a sentinel, the key, and a detail.
local function problem(code, key, detail)
  return redis.error_reply('MITZBLOOM_' .. code .. ' ' .. key .. ' ' .. (detail or ''))
end

-- foreign returns the problem of key, which holds what redisfilter did not
-- write there.
local function foreign(key)
  local t = redis.call('TYPE', key).ok
  if t == 'string' then t = 'a string of ' .. redis.call('STRLEN', key) .. ' bytes' else t = 'a ' .. t end
  return problem('FOREIGN', key, 'holds ' .. t)
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

-- check_hold returns the error reply for a shard's hold key if it holds
-- what redisfilter did not write, or nil: it is missing or holds HOLD.
local function check_hold(key)
  local v = redis.pcall('GET', key)
  if type(v) == 'table' then return problem('WRONGTYPE', key, v.err) end
  if v and v ~= HOLD then return foreign(key) end
  return nil
end

-- check_gens returns the error reply for a window's record of generations
-- if it is not one that redisfilter wrote, or nil: it is missing or a
-- sorted set with GENS_MARK.
local function check_gens(key)
  local n = redis.pcall('ZSCORE', key, GENS_MARK)
  if type(n) == 'table' then return problem('WRONGTYPE', key, n.err) end
  if not n and redis.call('EXISTS', key) == 1 then
    return problem('FOREIGN', key, 'holds a sorted set without the member ' .. GENS_MARK)
  end
  return nil
end

-- check_bitmap returns the error reply for the bitmap key if it is not one
-- of nbytes bytes, or nil, and its length. A missing bitmap is lost for a
-- plain filter (gens_key is nil); a missing window generation is lost if
-- the record gens_key holds it with an expiry after now (Unix ms), and
-- otherwise not created yet, or expired. A window's generation of nbytes
-- bytes is its own only if its record holds it.
local function check_bitmap(key, nbytes, gens_key, now)
  local len = redis.pcall('STRLEN', key)
  if type(len) == 'table' then return problem('WRONGTYPE', key, len.err), 0 end
  if len ~= 0 and len ~= nbytes then return problem('LENGTH', key, len .. ' ' .. nbytes), len end
  if len == 0 and redis.call('EXISTS', key) == 1 then return foreign(key), 0 end
  if not gens_key then
    if len == 0 then return problem('NOBITMAP', key), 0 end
    return nil, len
  end
  local expires = redis.call('ZSCORE', gens_key, key)
  if len == nbytes and not expires then
    return problem('FOREIGN', key, 'holds a string of ' .. len .. ' bytes that the window did not record'), len
  end
  if len == 0 and expires and tonumber(now) < tonumber(expires) then return problem('NOGENERATION', key), 0 end
  return nil, len
end
