package redisfilter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A route says where send sends a request.
type route int

const (
	// anyNode is for reads that a replica may serve: on a ClusterClient
	// created with ReadOnly, a replica of the shard's master, chosen as
	// go-redis chooses one (RouteByLatency, RouteRandomly).
	anyNode route = iota
	// master is for reads that must see what the master holds.
	master
	// write is for writes: the master, and with WithWait, a WAIT on the
	// connection that carried them.
	write
)

// send sends reqs, each to its shard's node as rt says, in one pipeline per
// node, the nodes in parallel, so that they cost one round trip per node. A
// request whose node answers MOVED, ASK or the like is sent again through
// go-redis's routing, which follows redirections and retries with backoff;
// so is a read after a network error, since a replica that died is still in
// the client's map until its next reload, and go-redis's own routing falls
// back to the master.
func (c *core[T]) send(ctx context.Context, reqs []*request, rt route) {
	cl, ok := c.rdb.(*redis.ClusterClient)
	if !ok {
		c.sendTo(ctx, c.rdb, reqs, rt)
		return
	}
	replicas := rt == anyNode && cl.Options().ReadOnly
	byNode := make(map[*redis.Client][]*request)
	for _, r := range reqs {
		node, err := cl.MasterForKey(ctx, r.shard.key)
		if err == nil && replicas {
			var replica *redis.Client
			if replica, err = cl.SlaveForKey(ctx, r.shard.key); err == nil {
				r.replica = replica != node
				node = replica
			}
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
			c.sendTo(ctx, node, rs, rt)
			break
		}
		wg.Go(func() { c.sendTo(ctx, node, rs, rt) })
	}
	wg.Wait()
	reloaded := false
	for _, r := range reqs {
		var rerr redis.Error
		retry := r.err != nil && (redirected(r.err) || r.replica && !errors.As(r.err, &rerr) && ctx.Err() == nil)
		if !retry {
			continue
		}
		if !reloaded {
			cl.ReloadState(ctx)
			reloaded = true
		}
		c.resend(ctx, cl, r, rt)
	}
	// go-redis's own retries of a redirected request (MaxRedirects, 3 by
	// default, with its backoff) can all fall within the moment that a
	// slot's move takes to settle: the master has handed the slot on, and
	// the client's map, reloaded in the background, does not say so yet.
	// The requests still redirected are sent again after a pause, twice as
	// long each time, up to settleTries times, within ctx.
	for try, pause := 0, settlePause; try < settleTries; try, pause = try+1, 2*pause {
		var redirects []*request
		for _, r := range reqs {
			if r.err != nil && redirected(r.err) {
				redirects = append(redirects, r)
			}
		}
		if len(redirects) == 0 || !sleep(ctx, pause) {
			return
		}
		cl.ReloadState(ctx)
		for _, r := range redirects {
			c.resend(ctx, cl, r, rt)
		}
	}
}

// settleTries and settlePause bound the pauses of send for a slot's move to
// settle: 10, 20, 40, 80 and 160 ms, 310 ms in all.
const (
	settleTries = 5
	settlePause = 10 * time.Millisecond
)

// sleep waits for d, and reports false, at once, if ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// resend sends r, which its node refused (MOVED, ASK or the like) or a
// replica could not answer, again through go-redis's routing, or to its
// master as the slot map now has it.
func (c *core[T]) resend(ctx context.Context, cl *redis.ClusterClient, r *request, rt route) {
	// go-redis sends a read to a replica if the client was created
	// with ReadOnly, and picks the node for each command of it on its
	// own, and again for each command that failed: there a read of
	// several commands, whose checks must come from the node that
	// answers its bits, goes to its master as the slot map now has it,
	// all of it, and if that node too redirects it, send tries again
	// after a pause. (An EVAL before it, which made go-redis route the
	// pipeline to the masters, did not hold for the commands go-redis
	// sent again, which a replica restarted empty answered with zero
	// bits.) Without ReadOnly, go-redis sends each command to the
	// master that holds its key, following ASK while a slot migrates:
	// a key is whole on one node, so each answer is that key's.
	if !r.tx && len(r.cmds) > 1 && cl.Options().ReadOnly {
		r.err, r.res, r.replica = nil, nil, false
		node, err := cl.MasterForKey(ctx, r.shard.key)
		if err != nil {
			r.err = err
			return
		}
		c.sendTo(ctx, node, []*request{r}, rt)
		return
	}
	r.err, r.res, r.replica = nil, nil, rt != write && cl.Options().ReadOnly
	cmds := make([]*redis.Cmd, len(r.cmds))
	add := func(p redis.Pipeliner) error {
		for i, args := range r.cmds {
			cmds[i] = p.Do(ctx, args...)
		}
		return nil
	}
	var err error
	if r.tx {
		_, err = cl.TxPipelined(ctx, add)
	} else {
		_, err = cl.Pipelined(ctx, add)
	}
	if err != nil && !anyErr([][]*redis.Cmd{cmds}, nil) {
		r.err = err
		return
	}
	for i, cmd := range cmds {
		c.meter.send(r.cmds[i])
		c.meter.receive(cmd.Val(), cmd.Err())
		r.record(cmd)
	}
	if rt == write && c.wait.replicas > 0 {
		// go-redis chose the connection: no WAIT can confirm it.
		r.unconfirmed = fmt.Errorf("%w: the write was redirected to another node (the slot moved), where no WAIT can confirm it; the bits are set", ErrNotReplicated)
	}
}

// sendChecked sends reqs as send does and checks each with check; a request
// that a replica answered and check finds a problem in (its keys missing or
// of another creation: the replica lags its master, is syncing from it
// after a restart, or serves a slot that is moving) is sent again to its
// master, whose answer stands, so that a replica never reports a loss that
// its master does not confirm. If the master's slot moved meanwhile, go-redis
// sends the request on where the slot went, and to a replica there if the
// client reads from replicas; a problem in that answer, which no master
// confirmed, is an error wrapping ErrTryAgain.
func (c *core[T]) sendChecked(ctx context.Context, reqs []*request, rt route, check func(*request) error) {
	c.send(ctx, reqs, rt)
	var again []*request
	for _, r := range reqs {
		if r.replica && isProblem(check(r)) {
			r.err, r.res, r.replica = nil, nil, false
			again = append(again, r)
		}
	}
	if len(again) == 0 {
		return
	}
	c.send(ctx, again, master)
	for _, r := range again {
		if err := check(r); r.replica && isProblem(err) {
			// %v, not %w: the problem is not the master's.
			r.err = fmt.Errorf("%w: the slot moved while a replica answered %v", ErrTryAgain, err)
		}
	}
}

// sendTo sends reqs to one server in one pipeline, a request's transaction
// within MULTI and EXEC; for a write with WithWait, on a connection of its
// own, followed by a WAIT on it, whose answer every request records.
func (c *core[T]) sendTo(ctx context.Context, node redis.Cmdable, reqs []*request, rt route) {
	var conn *redis.Conn
	client, ok := node.(*redis.Client)
	if ok && rt == write && c.wait.replicas > 0 {
		conn = client.Conn()
		defer conn.Close()
		node = conn
	}
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
	// Each command carries its own error, but for an error of the
	// connection that no command got to carry: a failed AUTH (WRONGPASS)
	// is returned by Exec alone.
	if _, err := pipe.Exec(ctx); err != nil && !anyErr(cmds, execs) {
		for _, r := range reqs {
			r.err = err
		}
		return
	}
	for i, r := range reqs {
		for j, cmd := range cmds[i] {
			c.meter.send(r.cmds[j])
			if !r.tx {
				c.meter.receive(cmd.Val(), cmd.Err())
			}
		}
		if r.tx {
			c.meter.receive(execs[i].Val(), execs[i].Err())
		}
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
	if conn != nil {
		unconfirmed := c.wait.confirm(ctx, conn, client.Options().Addr)
		for _, r := range reqs {
			r.unconfirmed = unconfirmed
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
