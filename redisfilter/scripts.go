package redisfilter

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
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

// lib.lua's functions check a shard's keys; log.lua's write its change log.
var (
	guardScript   = loadScript("guard", "lib", "log")
	unguardScript = loadScript("unguard", "lib")
	readScript    = withPlain(loadScript("read", "lib"), readPlain)
	mergeScript   = loadScript("merge", "lib", "log")
	inspectScript = withPlain(loadScript("inspect", "lib", "log"), inspectPlain)
	claimScript   = loadScript("claim", "lib")
	createScript  = loadScript("create", "lib", "log")
	changesScript = withPlain(loadScript("changes", "lib", "log"), changesPlain)
	pushScript    = loadScript("push", "lib", "log")
	deleteScript  = loadScript("delete", "lib", "log")
)

// A script is one of lua/, as it is sent to Redis.
type script struct {
	text     string
	sha      string // its SHA-1, in hex, for EVALSHA
	readOnly bool   // flags=no-writes: sent with EVALSHA_RO and EVAL_RO
	// plain, if not nil, does what the script does with plain read
	// commands, for a user that may not run scripts (see plain.go).
	plain func(call) plainRead
}

// loadScript returns lua/name.lua, after its first line the functions of
// the libraries libs (lua/lib.lua, lua/log.lua), without its comment lines,
// blank lines and indentation, which Redis would hash and parse at every
// EVAL.
func loadScript(name string, libs ...string) script {
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
	text := b.String()
	sha := sha1.Sum([]byte(text))
	return script{text: text, sha: hex.EncodeToString(sha[:]), readOnly: strings.Contains(shebang, "flags=no-writes")}
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

// A reply is what a call of a script returned.
type reply struct {
	val     any // nil for Lua's false
	err     error
	replica bool // a replica may have answered
}

// command returns the command that runs s for cl: by its SHA-1, or by its
// text if text is set, with the _RO commands if s only reads.
func (s script) command(text bool, cl call) []any {
	name, body := "EVALSHA", s.sha
	if text {
		name, body = "EVAL", s.text
	}
	if s.readOnly {
		name += "_RO"
	}
	args := make([]any, 0, 3+len(cl.keys)+len(cl.args))
	args = append(args, name, body, len(cl.keys))
	for _, k := range cl.keys {
		args = append(args, k)
	}
	return append(args, cl.args...)
}

// runScript runs s once per call, each on its shard's node as rt says (see
// send), and returns each call's reply. Scripts are run by their SHA-1; a
// server that does not know it (after a restart, or SCRIPT FLUSH) gets the
// calls that failed sent again with the script's text, which is safe
// because none of them ran.
func (c *core[T]) runScript(ctx context.Context, s script, rt route, calls []call) []reply {
	reqs := make([]*request, len(calls))
	for i, cl := range calls {
		reqs[i] = &request{shard: cl.shard, cmds: [][]any{s.command(false, cl)}}
	}
	failed := func(r *request) error {
		if r.err != nil {
			return r.err
		}
		if err, ok := r.res[0].(error); ok {
			return err
		}
		return nil
	}
	c.sendChecked(ctx, reqs, rt, failed)
	var again []*request
	for i, r := range reqs {
		if noScript(failed(r)) {
			r.res, r.err, r.cmds = nil, nil, [][]any{s.command(true, calls[i])}
			again = append(again, r)
		}
	}
	if len(again) > 0 {
		c.sendChecked(ctx, again, rt, failed)
	}
	if s.plain != nil {
		c.sendPlain(ctx, s, rt, calls, reqs, failed)
	}
	replies := make([]reply, len(reqs))
	for i, r := range reqs {
		if err := failed(r); err != nil {
			replies[i].err = err
			continue
		}
		replies[i] = reply{val: r.res[0], err: r.unconfirmed, replica: r.replica}
	}
	return replies
}

// noScript reports whether err says that the server does not know a
// script's SHA-1.
func noScript(err error) bool {
	return err != nil && (errors.Is(err, redis.ErrNoScript) || redis.HasErrorPrefix(err, "NOSCRIPT"))
}
