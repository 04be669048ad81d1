package redisfilter

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// ScriptText returns lua/name.lua as the package sends it, for the tests
// that run the scripts directly.
func ScriptText(name string) string { return allScripts[name].Text() }

// WrapScriptError returns the error that a call of a filter returns for
// err, an error reply of a script, so that tests see what it wraps.
func WrapScriptError(err error) error { return testCore().wrap(context.Background(), "test", err) }

// RecordedSlots returns testdata/keyslots.txt, for the test that checks it
// against a server.
var RecordedSlots = recordedSlots

// MisrememberLog makes h remember other bytes before its checkpoint of
// shard s's log than the log holds, as if the server had lost the log's end
// and others had appended there since, as after a failover that lost
// writes. The log must not be empty.
func MisrememberLog[T any](h *Hybrid[T], s int) {
	tail := []byte(h.cursors[s].tail)
	for i := range tail {
		tail[i] ^= 0xff
	}
	h.cursors[s].tail = string(tail)
}

// ForgetHistory makes h take the server of shard s for one of another
// replication history at its next Sync, as after a failover.
func ForgetHistory[T any](h *Hybrid[T], s int) { h.cursors[s].replid = "another" }

// Plain runs the plain equivalent (plain.go) of lua/name.lua on rdb with
// keys and args as the script takes them, and returns its reply or its
// error.
func Plain(ctx context.Context, rdb *redis.Client, name string, keys []string, args ...any) (any, error) {
	p, _ := allScripts[name].Plain(wire.Call{Keys: keys, Args: args})
	w := wire.New(rdb, wire.Wait{}, isProblem)
	run := func(cmds [][]any) ([]any, error) {
		r := &wire.Request{Key: keys[0], Cmds: cmds}
		w.Send(ctx, []*wire.Request{r}, wire.Master, nil)
		return r.Res, r.Err
	}
	if p.Pre != nil {
		res, err := run(p.Pre)
		if err != nil {
			return nil, err
		}
		p.Cmds = p.Build(res)
	}
	res, err := run(p.Cmds)
	if err != nil {
		return nil, err
	}
	v, err := p.Decode(res)
	if err != nil {
		return nil, testCore().wrap(ctx, "test", err)
	}
	return v, nil
}
