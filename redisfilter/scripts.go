package redisfilter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// scriptPrelude returns the Lua every script that touches bits starts with.
// It checks the config key, so that a filter re-created with other
// parameters under the same name is never read or written with the wrong
// ones, and defines fail, which the scripts return their errors through and
// which runs the Lua statement cleanup first. The errors start with codes
// that wrap maps to sentinels.
func scriptPrelude(cleanup string) string {
	return `
local function fail(msg)
  ` + cleanup + `
  return redis.error_reply(msg)
end
local cfg = redis.pcall('GET', KEYS[1])
if type(cfg) == 'table' then return fail(cfg.err) end
if cfg ~= ARGV[1] then
  if not cfg then return fail('MITZBLOOM_NOTFOUND config key ' .. KEYS[1] .. ' is missing') end
  return fail('MITZBLOOM_MISMATCH ' .. cfg)
end
local nbytes = tonumber(ARGV[2])
`
}

// putScript sets the bits of values in KEYS[2]. ARGV: the config, the bitmap's
// size in bytes, the Unix time in milliseconds at which to expire a bitmap
// it creates, or 0 if the bitmap must exist, k, and then the Redis bit
// offsets, in decimal, k per value. It returns a string with one character
// per value, '1' if the value changed a bit.
var putScript = redis.NewScript(scriptPrelude("") + `
local len = redis.call('STRLEN', KEYS[2])
if len == 0 then
  if ARGV[3] == '0' then return fail('MITZBLOOM_NOTFOUND bitmap ' .. KEYS[2] .. ' is missing') end
  redis.call('SETRANGE', KEYS[2], nbytes - 1, '\0')
  redis.call('PEXPIREAT', KEYS[2], ARGV[3])
elseif len ~= nbytes then
  return fail('MITZBLOOM_NOTFILTER ' .. KEYS[2] .. ' holds ' .. len .. ' bytes, want ' .. nbytes)
end
local k = tonumber(ARGV[4])
local key = KEYS[2]
local out = {}
for v = 1, (#ARGV - 4) / k do
  local changed = '0'
  for j = 4 + (v - 1) * k + 1, 4 + v * k do
    -- GETBIT first, as a local filter loads before it ORs: a bit that is
    -- set already, the common case in a filling filter, costs a read and
    -- no write (no dirty key, no effect to propagate).
    if redis.call('GETBIT', key, ARGV[j]) == 0 then
      -- '1', not 1: Redis formats a Lua number with snprintf on every call.
      redis.call('SETBIT', key, ARGV[j], '1')
      changed = '1'
    end
  end
  out[v] = changed
end
return table.concat(out)
`)

// containsScript tests values against the bitmaps KEYS[2:], answering '1' for
// a value all of whose bits are set in one of them. ARGV as for putScript,
// except that ARGV[3] is '1' if bitmaps may be missing, and '0' if they must
// exist.
var containsScript = redis.NewScript(scriptPrelude("") + `
local keys = {}
for g = 2, #KEYS do
  local len = redis.call('STRLEN', KEYS[g])
  if len == nbytes then
    keys[#keys + 1] = KEYS[g]
  elseif len ~= 0 then
    return fail('MITZBLOOM_NOTFILTER ' .. KEYS[g] .. ' holds ' .. len .. ' bytes, want ' .. nbytes)
  elseif ARGV[3] == '0' then
    return fail('MITZBLOOM_NOTFOUND bitmap ' .. KEYS[g] .. ' is missing')
  end
end
local k = tonumber(ARGV[4])
local out = {}
for v = 1, (#ARGV - 4) / k do
  local found = '0'
  for _, key in ipairs(keys) do
    local all = true
    for j = 4 + (v - 1) * k + 1, 4 + v * k do
      if redis.call('GETBIT', key, ARGV[j]) == 0 then
        all = false
        break
      end
    end
    if all then
      found = '1'
      break
    end
  end
  out[v] = found
end
return table.concat(out)
`)

// openScript creates the config key KEYS[1] and the bitmap KEYS[2], if given,
// or checks them. It checks everything before it writes anything.
var openScript = redis.NewScript(`
local cfg = redis.call('GET', KEYS[1])
if cfg and cfg ~= ARGV[1] then return redis.error_reply('MITZBLOOM_MISMATCH ' .. cfg) end
local nbytes = tonumber(ARGV[2])
local len = 0
if #KEYS > 1 then
  len = redis.call('STRLEN', KEYS[2])
  if len ~= 0 and len ~= nbytes then
    return redis.error_reply('MITZBLOOM_NOTFILTER ' .. KEYS[2] .. ' holds ' .. len .. ' bytes, want ' .. nbytes)
  end
  if len ~= 0 and not cfg then
    return redis.error_reply('MITZBLOOM_NOTFILTER ' .. KEYS[2] .. ' exists without config key ' .. KEYS[1])
  end
  if len == 0 then redis.call('SETRANGE', KEYS[2], nbytes - 1, '\0') end
end
if not cfg then redis.call('SET', KEYS[1], ARGV[1]) end
return 'OK'
`)

// errCode is the prefix of the scripts' own errors.
const errCode = "MITZBLOOM_"

// scriptErrors maps the codes of the scripts' errors to sentinels.
var scriptErrors = []struct {
	code string
	err  error
}{
	{errCode + "MISMATCH ", ErrMismatch},
	{errCode + "NOTFOUND ", ErrNotFound},
	{errCode + "NOTFILTER ", ErrNotFilter},
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
		if strings.HasPrefix(msg, "WRONGTYPE") {
			return fmt.Errorf("%w: %s %q: %w", ErrNotFilter, op, c.name, err)
		}
	}
	return fmt.Errorf("redisfilter: %s %q: %w", op, c.name, err)
}

// fail returns an error wrapping sentinel; for ErrMismatch, detail is the
// stored config.
func (c *core[T]) fail(op string, sentinel error, detail string) error {
	if sentinel == ErrMismatch {
		detail = fmt.Sprintf("stored %q, want %q", detail, c.cfg)
	}
	return fmt.Errorf("%w: %s %q: %s", sentinel, op, c.name, detail)
}

// open runs openScript: bitmap is "" for a windowed filter, whose bitmaps
// are created by the puts of each generation.
func (c *core[T]) open(ctx context.Context, bitmap string) error {
	keys := []string{c.cfgKey}
	if bitmap != "" {
		keys = append(keys, bitmap)
	}
	return c.wrap("open", openScript.Run(ctx, c.rdb, keys, c.cfg, c.nbytes()).Err())
}

// runScripts runs script once per element of args, in one round trip, and
// returns the concatenation of their string replies. Scripts are run by
// their SHA-1; a server that does not know it (after a restart, or SCRIPT
// FLUSH) gets the script loaded and the calls that failed sent again, which
// is safe because none of them ran.
func (c *core[T]) runScripts(ctx context.Context, script *redis.Script, keys []string, args [][]any) ([]byte, error) {
	cmds := c.pipeline(ctx, script, keys, args)
	var retry []int
	for i, cmd := range cmds {
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			retry = append(retry, i)
		}
	}
	if len(retry) > 0 {
		if err := script.Load(ctx, c.rdb).Err(); err != nil {
			return nil, err
		}
		again := make([][]any, len(retry))
		for j, i := range retry {
			again[j] = args[i]
		}
		for j, cmd := range c.pipeline(ctx, script, keys, again) {
			cmds[retry[j]] = cmd
		}
	}
	var out []byte
	for _, cmd := range cmds {
		s, err := cmd.Text()
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}

func (c *core[T]) pipeline(ctx context.Context, script *redis.Script, keys []string, args [][]any) []*redis.Cmd {
	if len(args) == 1 {
		return []*redis.Cmd{c.rdb.EvalSha(ctx, script.Hash(), keys, args[0]...)}
	}
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(args))
	for i, a := range args {
		cmds[i] = pipe.EvalSha(ctx, script.Hash(), keys, a...)
	}
	// Each command carries its own error, checked by the caller.
	_, _ = pipe.Exec(ctx)
	return cmds
}
