package redisfilter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Every script starts with a shebang (Redis 7): "#!lua" for those that
// write, which Redis refuses to start when it is out of memory instead of
// failing halfway, and "#!lua flags=no-writes" for those that only read,
// which run with EVALSHA_RO, so that a read-only ACL user, a replica, and a
// server out of memory all run them.
const (
	writes   = "#!lua\n"
	noWrites = "#!lua flags=no-writes\n"
)

// scriptPrelude returns the Lua every script that touches bits starts with.
// It checks the config key, so that a filter re-created with other
// parameters, or re-created at all, under the same name is never read or
// written with the wrong ones, and defines fail, which the scripts return
// their errors through and which runs the Lua statement cleanup first. The
// errors start with codes that wrap maps to sentinels. It also defines
// missing, which tells whether a window generation KEYS[g] that does not
// exist is lost, one recorded in the sorted set KEYS[2] with an expiry
// still to come, or merely not created or expired.
func scriptPrelude(shebang, cleanup string) string {
	return shebang + `
local function fail(msg)
  ` + cleanup + `
  return redis.error_reply(msg)
end
local cfg = redis.pcall('GET', KEYS[1])
if type(cfg) == 'table' then return fail(cfg.err) end
if cfg ~= ARGV[1] then
  if not cfg then return fail('MITZBLOOM_LOST config key ' .. KEYS[1] .. ' is missing') end
  return fail('MITZBLOOM_MISMATCH ' .. cfg)
end
local nbytes = tonumber(ARGV[2])
local function lost(key)
  local expires = redis.call('ZSCORE', KEYS[2], key)
  if not expires then return false end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) < tonumber(expires)
end
local function check(key, len, windowed)
  if len == nbytes then return nil end
  if len ~= 0 then return 'MITZBLOOM_NOTFILTER ' .. key .. ' holds ' .. len .. ' bytes, want ' .. nbytes end
  if not windowed then return 'MITZBLOOM_LOST bitmap ' .. key .. ' is missing' end
  if lost(key) then return 'MITZBLOOM_LOST window generation ' .. key .. ' is missing before its expiry' end
  return nil
end
`
}

// guardScript guards the BITFIELD of a Put, which it precedes in a
// MULTI/EXEC transaction, followed by unguardScript. Its keys are those of
// scriptPrelude, which checks the config, followed by the bitmap (a
// generation, for a window: ARGV[3], the Unix time in milliseconds at which
// it expires, is not '0') and the key Open creates beside the config for
// the guard (so that a Put names no missing key, which Redis Cluster refuses
// with TRYAGAIN while a slot migrates). It checks the bitmap against its
// size ARGV[2]; for a window it creates a generation that was never created
// or expired, recording it in the sorted set KEYS[2] with the same expiry,
// so that its loss is told from its absence. If the filter is not as this
// process opened it, it moves the bitmap to the guard's key and leaves a
// hash in its place, on which the BITFIELD fails with WRONGTYPE, and returns
// the error: a lost bitmap is never re-created piecemeal by a Put, and a
// filter re-created with other parameters never gets this one's bits.
// unguardScript puts the bitmap back. It is sent with EVAL, not EVALSHA: a
// script unknown to the server would fail, within the transaction, and
// leave the BITFIELD unguarded.
var guardScript = scriptPrelude(writes, `
  local moved = 'none'
  if redis.call('EXISTS', KEYS[#KEYS - 1]) == 1 then
    redis.call('RENAME', KEYS[#KEYS - 1], KEYS[#KEYS])
    moved = 'moved'
  end
  redis.call('HSET', KEYS[#KEYS - 1], 'mitzbloom-guard', moved)`) + `
local key = KEYS[#KEYS - 1]
local len = redis.pcall('STRLEN', key)
if type(len) == 'table' then return fail('MITZBLOOM_NOTFILTER ' .. key .. ': ' .. len.err) end
local err = check(key, len, ARGV[3] ~= '0')
if err then return fail(err) end
if len == 0 then
  local t = redis.call('TIME')
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  redis.call('SETRANGE', key, nbytes - 1, '\0')
  redis.call('PEXPIREAT', key, ARGV[3])
  redis.call('ZADD', KEYS[2], ARGV[3], key)
end
return 1
`

// unguardScript ends a Put's transaction: it undoes what guardScript did if
// it failed, with the same keys.
var unguardScript = writes + `
local key, hold = KEYS[#KEYS - 1], KEYS[#KEYS]
if redis.call('TYPE', key).ok == 'hash' then
  local moved = redis.call('HGET', key, 'mitzbloom-guard')
  if moved then redis.call('DEL', key) end
  if moved == 'moved' then
    redis.call('RENAME', hold, key)
    redis.call('SET', hold, 'mitzbloom')
  end
end
return 1
`

// readScript returns bytes ARGV[4] to ARGV[5] (inclusive) of the bitmap
// KEYS[2], or for a window (ARGV[6] is '1') of the generation KEYS[3],
// recorded in KEYS[2], with its config checked in the same step; a
// generation that was not created, or expired, reads as "". With ARGV[3]
// "count" rather than "range" it returns the number of bits set in them.
var readScript = redis.NewScript(scriptPrelude(noWrites, "") + `
local windowed = ARGV[6] == '1'
local key = KEYS[2]
if windowed then key = KEYS[3] end
local len = redis.call('STRLEN', key)
local err = check(key, len, windowed)
if err then return fail(err) end
if len == 0 then return '' end
if ARGV[3] == 'count' then return redis.call('BITCOUNT', key, ARGV[4], ARGV[5]) end
return redis.call('GETRANGE', key, ARGV[4], ARGV[5])
`)

// mergeScript ORs ARGV[4], a range of a local filter's bits, into the
// bitmap KEYS[2] at byte ARGV[3], through the temporary keys KEYS[3] and
// KEYS[4] in the filter's slot, which it deletes also when it fails: BITOP
// works on whole keys only.
var mergeScript = redis.NewScript(scriptPrelude(writes, "redis.call('DEL', KEYS[3], KEYS[4])") + `
local len = redis.call('STRLEN', KEYS[2])
local err = check(KEYS[2], len, false)
if err then return fail(err) end
local from = tonumber(ARGV[3])
redis.call('SET', KEYS[3], redis.call('GETRANGE', KEYS[2], from, from + #ARGV[4] - 1))
redis.call('SET', KEYS[4], ARGV[4])
redis.call('BITOP', 'OR', KEYS[3], KEYS[3], KEYS[4])
redis.call('SETRANGE', KEYS[2], from, redis.call('GET', KEYS[3]))
redis.call('DEL', KEYS[3], KEYS[4])
return 'OK'
`)

// inspectScript reads what Open needs to know, without writing, so that a
// read-only user can open an existing filter: the config key KEYS[1], or
// false, and the length of the bitmap KEYS[2], or for a window (KEYS[2] is
// the record of its generations) the number of generations recorded.
var inspectScript = redis.NewScript(noWrites + `
local cfg = redis.call('GET', KEYS[1])
local n
if ARGV[1] == '1' then n = redis.call('ZCARD', KEYS[2]) else n = redis.call('STRLEN', KEYS[2]) end
return {cfg, n}
`)

// createScript writes the config key KEYS[1] = ARGV[2], and the key KEYS[3]
// that a Put's guard moves a bitmap to, and, for a plain
// filter (ARGV[4] is '0'), creates the bitmap KEYS[2] of ARGV[3] bytes
// unless ARGV[5] is '1' (adopt it), if the config key still holds ARGV[1]
// ("" for none) and the bitmap still has the length ARGV[6] it had when Open
// looked; otherwise it returns the config key's value, for Open to look
// again.
var createScript = redis.NewScript(writes + `
local cfg = redis.call('GET', KEYS[1]) or ''
if cfg ~= ARGV[1] then return {0, cfg} end
if ARGV[4] == '0' then
  local len = redis.call('STRLEN', KEYS[2])
  if len ~= tonumber(ARGV[6]) then return {0, cfg} end
  if ARGV[5] ~= '1' then
    redis.call('DEL', KEYS[2])
    redis.call('SETRANGE', KEYS[2], tonumber(ARGV[3]) - 1, '\0')
  end
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[3], 'mitzbloom')
return {1, ARGV[2]}
`)

// errCode is the prefix of the scripts' own errors.
const errCode = "MITZBLOOM_"

// scriptErrors maps the codes of the scripts' errors to sentinels.
var scriptErrors = []struct {
	code string
	err  error
}{
	{errCode + "MISMATCH ", ErrMismatch},
	{errCode + "LOST ", ErrLost},
	{errCode + "NOTFILTER ", ErrNotFilter},
}

// redisErrors maps the codes of Redis's errors an operator acts on to
// sentinels. Redis 7 keeps the code of an error raised inside a script.
var redisErrors = []struct {
	code string
	err  error
}{
	{"OOM ", ErrOutOfMemory},
	{"NOPERM ", ErrNoPermission},
	{"TRYAGAIN ", ErrTryAgain},
	{"CROSSSLOT ", ErrCrossSlot},
	{"WRONGTYPE ", ErrNotFilter},
}

// wrap turns an error from Redis into one of this package's, naming the
// operation and the filter.
func (c *core[T]) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		for _, e := range scriptErrors {
			if detail, ok := strings.CutPrefix(msg, e.code); ok {
				return c.fail(op, e.err, detail)
			}
		}
		for _, e := range redisErrors {
			if strings.HasPrefix(msg, e.code) {
				return fmt.Errorf("%w: %s %q: %w", e.err, op, c.name, err)
			}
		}
	}
	c.reloadSlots(err)
	return fmt.Errorf("redisfilter: %s %q: %w", op, c.name, err)
}

// reloadSlots makes a cluster client reload its map of slots to nodes after
// err, an error of the network or one of Redis's not mapped above: a
// refused connection, a timeout or CLUSTERDOWN may be a master that died, and go-redis would otherwise keep calling it until
// its next periodic reload (ClusterOptions.ClusterStateReloadInterval, 60 s
// by default) long after a replica took over. go-redis coalesces the
// reloads of many failing calls into one at a time.
func (c *core[T]) reloadSlots(err error) {
	cl, ok := c.rdb.(interface{ ReloadState(context.Context) })
	if ok && !errors.Is(err, context.Canceled) {
		cl.ReloadState(context.Background())
	}
}

// fail returns an error wrapping sentinel; for ErrMismatch, detail is the
// stored config, which with the same parameters as c's but another identity
// means a filter re-created since c opened it.
func (c *core[T]) fail(op string, sentinel error, detail string) error {
	if sentinel == ErrMismatch {
		if paramsOf(detail) == c.params {
			return fmt.Errorf("%w: %s %q: re-created since this Filter opened it (config now %q, was %q): the values put before may be gone; open it again to use it",
				ErrLost, op, c.name, detail, c.cfg)
		}
		detail = fmt.Sprintf("stored %q, want %q", paramsOf(detail), c.params)
	}
	if sentinel == ErrLost {
		detail += c.lostAdvice
	}
	return fmt.Errorf("%w: %s %q: %s", sentinel, op, c.name, detail)
}

// A call is one run of a script: its keys and arguments.
type call struct {
	keys []string
	args []any
}

// scripts runs script once per call, pipelined, read-only scripts with the
// _RO commands, and returns their commands, each with its reply or error.
// Scripts are run by their SHA-1; a server that does not know it (after a
// restart, or SCRIPT FLUSH) gets the calls that failed sent again with the
// script's text, which is safe because none of them ran.
func (c *core[T]) scripts(ctx context.Context, script *redis.Script, readOnly bool, calls []call) []*redis.Cmd {
	cmds := c.pipeline(ctx, script, readOnly, false, calls)
	var retry []int
	for i, cmd := range cmds {
		if noScript(cmd.Err()) {
			retry = append(retry, i)
		}
	}
	if len(retry) > 0 {
		again := make([]call, len(retry))
		for j, i := range retry {
			again[j] = calls[i]
		}
		for j, cmd := range c.pipeline(ctx, script, readOnly, true, again) {
			cmds[retry[j]] = cmd
		}
	}
	return cmds
}

// pipeline sends script once per call, by its SHA-1, or by its text if
// text is set.
func (c *core[T]) pipeline(ctx context.Context, script *redis.Script, readOnly, text bool, calls []call) []*redis.Cmd {
	send := func(r redis.Scripter, cl call) *redis.Cmd {
		switch {
		case readOnly && text:
			return script.EvalRO(ctx, r, cl.keys, cl.args...)
		case readOnly:
			return script.EvalShaRO(ctx, r, cl.keys, cl.args...)
		case text:
			return script.Eval(ctx, r, cl.keys, cl.args...)
		}
		return script.EvalSha(ctx, r, cl.keys, cl.args...)
	}
	if len(calls) == 1 {
		return []*redis.Cmd{send(c.rdb, calls[0])}
	}
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(calls))
	for i, cl := range calls {
		cmds[i] = send(pipe, cl)
	}
	// Each command carries its own error, checked by the caller.
	_, _ = pipe.Exec(ctx)
	return cmds
}
