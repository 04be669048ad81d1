package redisfilter

import (
	"context"
	"embed"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The scripts are in lua/, each naming its KEYS and ARGV at the top. Each
// starts with a shebang (Redis 7): "#!lua" for those that write, which
// Redis refuses to start when it is out of memory instead of failing
// halfway, and "#!lua flags=no-writes" for those that only read, which run
// with EVALSHA_RO, so that a read-only ACL user, a replica, and a server out
// of memory all run them.
//
//go:embed lua/*.lua
var luaFiles embed.FS

var (
	guardScript   = loadScript("guard", true)
	unguardScript = loadScript("unguard", false)
	readScript    = loadScript("read", true)
	mergeScript   = loadScript("merge", true)
	inspectScript = loadScript("inspect", false)
	createScript  = loadScript("create", false)
)

// A script is one of lua/, as it is sent to Redis.
type script struct {
	*redis.Script
	text     string
	readOnly bool // flags=no-writes: sent with EVALSHA_RO and EVAL_RO
}

// loadScript returns lua/name.lua, after its first line the functions of
// lua/lib.lua if withLib is set, without its comment lines and blank lines,
// which Redis would hash and parse at every EVAL.
func loadScript(name string, withLib bool) script {
	src := luaSource(name)
	shebang, body, _ := strings.Cut(src, "\n")
	if withLib {
		body = luaSource("lib") + body
	}
	var b strings.Builder
	b.WriteString(shebang + "\n")
	for line := range strings.Lines(body) {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "--") {
			b.WriteString(line)
		}
	}
	text := b.String()
	return script{Script: redis.NewScript(text), text: text, readOnly: strings.Contains(shebang, "flags=no-writes")}
}

// luaSource returns the text of lua/name.lua.
func luaSource(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("redisfilter: script " + name + " is not embedded: " + err.Error())
	}
	return string(b)
}

// A call is one run of a script: its keys and arguments.
type call struct {
	keys []string
	args []any
}

// runScript runs s once per call, pipelined, and returns their commands,
// each with its reply or error. Scripts are run by their SHA-1; a server
// that does not know it (after a restart, or SCRIPT FLUSH) gets the calls
// that failed sent again with the script's text, which is safe because
// none of them ran.
func (c *core[T]) runScript(ctx context.Context, s script, calls []call) []*redis.Cmd {
	cmds := c.pipelineScript(ctx, s, false, calls)
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
		for j, cmd := range c.pipelineScript(ctx, s, true, again) {
			cmds[retry[j]] = cmd
		}
	}
	return cmds
}

// pipelineScript sends s once per call, by its SHA-1, or by its text if
// text is set.
func (c *core[T]) pipelineScript(ctx context.Context, s script, text bool, calls []call) []*redis.Cmd {
	send := func(r redis.Scripter, cl call) *redis.Cmd {
		switch {
		case s.readOnly && text:
			return s.EvalRO(ctx, r, cl.keys, cl.args...)
		case s.readOnly:
			return s.EvalShaRO(ctx, r, cl.keys, cl.args...)
		case text:
			return s.Eval(ctx, r, cl.keys, cl.args...)
		}
		return s.EvalSha(ctx, r, cl.keys, cl.args...)
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

// noScript reports whether err says that the server does not know a
// script's SHA-1.
func noScript(err error) bool {
	return errors.Is(err, redis.ErrNoScript) || redis.HasErrorPrefix(err, "NOSCRIPT")
}
