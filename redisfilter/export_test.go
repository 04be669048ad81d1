package redisfilter

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// ScriptText returns lua/name.lua as the package sends it, for the tests
// that run the scripts directly.
func ScriptText(name string) string { return allScripts[name].text }

// WrapScriptError returns the error that a call of a filter returns for
// err, an error reply of a script, so that tests see what it wraps.
func WrapScriptError(err error) error { return testCore().wrap(context.Background(), "test", err) }

// RecordedSlots returns testdata/keyslots.txt, for the test that checks it
// against a server.
var RecordedSlots = recordedSlots

// ForgetHistory makes h take the server of shard s for one of another
// replication history at its next Sync, as after a failover.
func ForgetHistory[T any](h *Hybrid[T], s int) { h.cursors[s].replid = "another" }

// PlainRead runs read.lua's plain equivalent (plain.go) on rdb with keys
// and args as the script takes them, and returns its reply or its error.
func PlainRead(ctx context.Context, rdb *redis.Client, keys []string, args ...any) (any, error) {
	p := readPlain(call{keys: keys, args: args})
	pipe := rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(p.cmds))
	for i, c := range p.cmds {
		cmds[i] = pipe.Do(ctx, c...)
	}
	_, _ = pipe.Exec(ctx)
	var r request
	for _, cmd := range cmds {
		r.record(cmd)
	}
	if r.err != nil {
		return nil, r.err
	}
	v, err := p.decode(r.res)
	if err != nil {
		return nil, testCore().wrap(ctx, "test", err)
	}
	return v, nil
}
