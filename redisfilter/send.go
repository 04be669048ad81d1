package redisfilter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// send sends reqs, each to its shard's node: on a cluster, the master for a
// put, and for a read a replica if the client was created with ReadOnly,
// chosen as go-redis chooses one; in one pipeline per node, the nodes in
// parallel, so a batch costs one round trip per node. A request whose node
// answers MOVED, ASK or the like is sent again through go-redis's routing,
// which follows redirections and retries with backoff.
func (c *core[T]) send(ctx context.Context, reqs []*request, write bool) {
	cl, ok := c.rdb.(*redis.ClusterClient)
	if !ok {
		sendTo(ctx, c.rdb, reqs)
		return
	}
	replicas := !write && cl.Options().ReadOnly
	byNode := make(map[*redis.Client][]*request)
	for _, r := range reqs {
		var node *redis.Client
		var err error
		if replicas {
			node, err = cl.SlaveForKey(ctx, r.shard.key)
		} else {
			node, err = cl.MasterForKey(ctx, r.shard.key)
		}
		if err != nil {
			r.err = err
			continue
		}
		byNode[node] = append(byNode[node], r)
	}
	var wg sync.WaitGroup
	for node, rs := range byNode {
		if len(byNode) == 1 {
			sendTo(ctx, node, rs)
			break
		}
		wg.Go(func() { sendTo(ctx, node, rs) })
	}
	wg.Wait()
	reloaded := false
	for _, r := range reqs {
		// A read, which may be sent again safely, also after a network
		// error: a replica that died is still in the client's map until
		// its next reload, and go-redis's own routing falls back to the
		// master.
		var rerr redis.Error
		retry := r.err != nil && (redirected(r.err) || replicas && !errors.As(r.err, &rerr) && ctx.Err() == nil)
		if !retry {
			continue
		}
		if !reloaded {
			cl.ReloadState(ctx)
			reloaded = true
		}
		r.err, r.res = nil, nil
		cmds := make([]*redis.Cmd, len(r.cmds))
		add := func(p redis.Pipeliner) error {
			for i, args := range r.cmds {
				cmds[i] = p.Do(ctx, args...)
			}
			return nil
		}
		if r.tx {
			_, _ = cl.TxPipelined(ctx, add)
		} else {
			_, _ = cl.Pipelined(ctx, add)
		}
		for _, cmd := range cmds {
			r.record(cmd)
		}
	}
}

// sendTo sends reqs to one server in one pipeline, a request's transaction
// within MULTI and EXEC.
func sendTo(ctx context.Context, node redis.Cmdable, reqs []*request) {
	pipe := node.Pipeline()
	cmds := make([][]*redis.Cmd, len(reqs))
	execs := make([]*redis.Cmd, len(reqs))
	for i, r := range reqs {
		if r.tx {
			pipe.Do(ctx, "MULTI")
		}
		for _, args := range r.cmds {
			cmds[i] = append(cmds[i], pipe.Do(ctx, args...))
		}
		if r.tx {
			execs[i] = pipe.Do(ctx, "EXEC")
		}
	}
	// Each command carries its own error.
	_, _ = pipe.Exec(ctx)
	for i, r := range reqs {
		if !r.tx {
			for _, cmd := range cmds[i] {
				r.record(cmd)
			}
			continue
		}
		// A command refused when queued (MOVED, OOM, NOPERM) makes EXEC
		// fail, and says why.
		for _, cmd := range cmds[i] {
			if err := cmd.Err(); err != nil && r.err == nil && !strings.HasPrefix(err.Error(), "QUEUED") {
				r.err = err
			}
		}
		res, err := execs[i].Slice()
		if r.err == nil && err != nil {
			r.err = err
		}
		if r.err == nil {
			if len(res) != len(r.cmds) {
				r.err = fmt.Errorf("EXEC answered %d replies for %d commands", len(res), len(r.cmds))
			}
			r.res = res
		}
	}
}

// record appends cmd's reply to r's, or sets r's error if cmd got no reply.
func (r *request) record(cmd *redis.Cmd) {
	v, err := cmd.Result()
	var rerr redis.Error
	switch {
	case errors.Is(err, redis.Nil):
		r.res = append(r.res, nil)
	case err == nil:
		r.res = append(r.res, v)
	case errors.As(err, &rerr) && !redirected(err):
		r.res = append(r.res, err)
	case r.err == nil:
		r.err = err
	}
}

// redirections are the codes of the errors redirected reports.
var redirections = []string{"MOVED ", "ASK ", "TRYAGAIN ", "CLUSTERDOWN ", "LOADING ", "READONLY ", "MASTERDOWN "}

// redirected reports whether err is one that a cluster client handles by
// following the slot to another node, or retrying there.
func redirected(err error) bool {
	msg := err.Error()
	for _, code := range redirections {
		if strings.HasPrefix(msg, code) {
			return true
		}
	}
	return false
}
