package wire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// sendTo sends reqs to one server in one pipeline, a request's transaction
// within MULTI and EXEC; for a write with a Wait, on a connection of its
// own, followed by a WAIT on it, whose answer every request records.
func (w *Wire) sendTo(ctx context.Context, node redis.Cmdable, reqs []*Request, rt Route) {
	var conn *redis.Conn
	client, ok := node.(*redis.Client)
	if ok && rt == Write && w.wait.Replicas > 0 {
		conn = client.Conn()
		defer conn.Close()
		node = conn
	}
	pipe := node.Pipeline()
	cmds := make([][]*redis.Cmd, len(reqs))
	execs := make([]*redis.Cmd, len(reqs))
	for i, r := range reqs {
		if r.Tx {
			pipe.Do(ctx, "MULTI")
		}
		for _, args := range r.Cmds {
			cmds[i] = append(cmds[i], pipe.Do(ctx, args...))
		}
		if r.Tx {
			execs[i] = pipe.Do(ctx, "EXEC")
		}
	}
	// Each command carries its own error, but for an error of the
	// connection that no command got to carry: a failed AUTH (WRONGPASS)
	// is returned by Exec alone.
	if _, err := pipe.Exec(ctx); err != nil && !anyErr(cmds, execs) {
		for _, r := range reqs {
			r.Err = err
		}
		return
	}
	m := meterOf(ctx)
	for i, r := range reqs {
		for j, cmd := range cmds[i] {
			m.send(r.Cmds[j])
			if !r.Tx {
				m.receive(cmd.Val(), cmd.Err())
			}
		}
		if r.Tx {
			m.receive(execs[i].Val(), execs[i].Err())
		}
		if !r.Tx {
			for _, cmd := range cmds[i] {
				r.Record(cmd)
			}
			continue
		}
		// A command refused when queued (MOVED, OOM, NOPERM) makes EXEC
		// fail, and says why.
		for _, cmd := range cmds[i] {
			if err := cmd.Err(); err != nil && r.Err == nil && !strings.HasPrefix(err.Error(), "QUEUED") {
				r.Err = err
			}
		}
		res, err := execs[i].Slice()
		if r.Err == nil && err != nil {
			r.Err = err
		}
		if r.Err == nil {
			if len(res) != len(r.Cmds) {
				r.Err = fmt.Errorf("EXEC answered %d replies for %d commands", len(res), len(r.Cmds))
			}
			r.Res = res
		}
	}
	if conn != nil {
		unconfirmed := w.wait.confirm(ctx, conn, client.Options().Addr)
		for _, r := range reqs {
			r.Unconfirmed = unconfirmed
		}
	}
}

// anyErr reports whether a command of cmds or execs has an error.
func anyErr(cmds [][]*redis.Cmd, execs []*redis.Cmd) bool {
	for _, cs := range cmds {
		for _, cmd := range cs {
			if cmd != nil && cmd.Err() != nil {
				return true
			}
		}
	}
	for _, cmd := range execs {
		if cmd != nil && cmd.Err() != nil {
			return true
		}
	}
	return false
}

// Record appends cmd's reply to r's, or sets r's error if cmd got no reply.
func (r *Request) Record(cmd *redis.Cmd) {
	v, err := cmd.Result()
	var rerr redis.Error
	switch {
	case errors.Is(err, redis.Nil):
		r.Res = append(r.Res, nil)
	case err == nil:
		r.Res = append(r.Res, v)
	case errors.As(err, &rerr) && !Redirected(err):
		r.Res = append(r.Res, err)
	case r.Err == nil:
		r.Err = err
	}
}

// A NodeReply is what one node answered a command of EachNode.
type NodeReply struct {
	Val any
	Err error
}

// EachNode sends cmd to every node of the client, the nodes in parallel:
// each master and replica of a cluster, or the one server; and returns
// each node's reply, and an error of the cluster's map of nodes, if the
// client could not read it.
func (w *Wire) EachNode(ctx context.Context, cmd ...any) ([]NodeReply, error) {
	var mu sync.Mutex
	var replies []NodeReply
	do := func(ctx context.Context, node interface {
		Do(context.Context, ...any) *redis.Cmd
	}) error {
		v, err := node.Do(ctx, cmd...).Result()
		mu.Lock()
		defer mu.Unlock()
		replies = append(replies, NodeReply{v, err})
		return nil
	}
	type sharded interface {
		ForEachShard(context.Context, func(context.Context, *redis.Client) error) error
	}
	if cl, ok := w.rdb.(sharded); ok {
		err := cl.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error { return do(ctx, node) })
		return replies, err
	}
	return replies, do(ctx, w.rdb)
}
