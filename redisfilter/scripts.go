package redisfilter

import (
	"context"
	"embed"
	"strings"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
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

// lib.lua's functions check a shard's keys; log.lua's write its change log.
var (
	guardScript   = loadScript("guard", "lib", "log")
	unguardScript = loadScript("unguard", "lib")
	readScript    = loadPlain("read", readPlain, "lib")
	mergeScript   = loadScript("merge", "lib", "log")
	inspectScript = loadPlain("inspect", inspectPlain, "lib", "log")
	claimScript   = loadScript("claim", "lib")
	createScript  = loadScript("create", "lib", "log")
	changesScript = loadPlain("changes", changesPlain, "lib", "log")
	pushScript    = loadScript("push", "lib", "log")
	deleteScript  = loadScript("delete", "lib", "log")
)

// loadScript returns lua/name.lua, after its first line the functions of
// the libraries libs (lua/lib.lua, lua/log.lua), without its comment lines,
// blank lines and indentation, which Redis would hash and parse at every
// EVAL.
func loadScript(name string, libs ...string) wire.Script {
	return loadPlain(name, nil, libs...)
}

// loadPlain returns lua/name.lua as loadScript does, with plain, what it
// does in plain read commands, for a user that may not run scripts (see
// plain.go).
func loadPlain(name string, plain func(wire.Call) wire.Plain, libs ...string) wire.Script {
	src := luaSource(name)
	shebang, body, _ := strings.Cut(src, "\n")
	for i := len(libs) - 1; i >= 0; i-- {
		body = luaSource(libs[i]) + body
	}
	var b strings.Builder
	b.WriteString(shebang + "\n")
	for line := range strings.Lines(body) {
		if t := strings.TrimLeft(line, " \t"); strings.TrimSpace(t) != "" && !strings.HasPrefix(t, "--") {
			b.WriteString(t)
		}
	}
	return wire.NewScript(b.String(), plain)
}

// luaSource returns the text of lua/name.lua.
func luaSource(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("redisfilter: script " + name + " is not embedded: " + err.Error())
	}
	return string(b)
}

// A call is one run of a script on one shard: its keys, in the shard's
// slot, and its arguments.
type call struct {
	shard *shard
	keys  []string
	args  []any
}

// runScript runs s once per call, each on its shard's node as rt says, and
// returns each call's reply (see [wire.Wire.Run]).
func (c *core[T]) runScript(ctx context.Context, s wire.Script, rt wire.Route, calls []call) []wire.Reply {
	wcalls := make([]wire.Call, len(calls))
	for i, cl := range calls {
		wcalls[i] = wire.Call{Keys: cl.keys, Args: cl.args}
	}
	return c.wire.Run(ctx, s, rt, wcalls)
}
