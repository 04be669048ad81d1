// Package wire carries redisfilter's commands and scripts to Redis: to the
// node that holds each one's slot, a replica for a read that one may serve,
// its master when a replica's answer is doubtful, settling redirections and
// retries (MOVED, ASK, TRYAGAIN, NOSCRIPT), confirming writes with WAIT,
// counting the bytes of a call, and turning what Redis and the network
// answer into redisfilter's errors ([Describe]). It knows nothing of a
// filter: its callers build the commands and read the replies.
//
// Its entry points are [Wire.Send], for requests of plain commands, and
// [Wire.Run], for scripts, which sends them with Send.
package wire

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Route says where Send sends a request.
type Route int

const (
	// AnyNode is for reads that a replica may serve: on a ClusterClient
	// created with ReadOnly, a replica of the shard's master, chosen as
	// go-redis chooses one (RouteByLatency, RouteRandomly).
	AnyNode Route = iota
	// Master is for reads that must see what the master holds.
	Master
	// Write is for writes: the master, and with a Wait, a WAIT on the
	// connection that carried them.
	Write
)

// A Request is what one step of a call sends to the node of one slot: its
// commands, in a transaction or not, and what came back.
type Request struct {
	Key  string // a key in the request's slot, which routes it
	Tx   bool   // sent within MULTI and EXEC
	Cmds [][]any
	Res  []any // each command's reply: a value, nil for a nil reply, or a redis.Error
	Err  error // an error that left no replies
	// Replica is set if a replica answered.
	Replica bool
	// Unconfirmed wraps ErrNotReplicated for a write that the Wait asks
	// to confirm and WAIT did not.
	Unconfirmed error
}

// reset clears what r got back, to send it again.
func (r *Request) reset() { r.Err, r.Res, r.Replica = nil, nil, false }

// A Wire sends requests through one go-redis client.
type Wire struct {
	rdb  redis.UniversalClient
	wait Wait
	// doubt reports whether an answer of a replica that a check found
	// wrong must be asked again of the master.
	doubt func(error) bool
	dials *dialRecord // rdb's last failed dial, for Describe
}

// New returns a Wire over rdb that confirms writes as wait says, and asks
// the master again for a replica's answer whose check returns an error
// doubt reports true for (the replica lags its master, or is syncing from
// it after a restart, or serves a slot that is moving). It adds to rdb,
// once per client, a hook that records the error of its last failed dial
// (see Describe), and changes nothing else of it.
func New(rdb redis.UniversalClient, wait Wait, doubt func(error) bool) *Wire {
	return &Wire{rdb: rdb, wait: wait, doubt: doubt, dials: recordDials(rdb)}
}

// Send sends reqs, each to its slot's node as rt says, in one pipeline per
// node, the nodes in parallel, so that they cost one round trip per node.
// If check is not nil, a request that a replica answered and check(i),
// given its index in reqs, returns an error that w doubts is sent again to
// its master, whose answer stands, so that a replica never reports a
// problem that its master does not confirm. If the master's slot moved
// meanwhile, go-redis sends the request on where the slot went, and to a
// replica there if the client reads from replicas; a problem in that
// answer, which no master confirmed, is an error wrapping ErrTryAgain.
func (w *Wire) Send(ctx context.Context, reqs []*Request, rt Route, check func(i int) error) {
	w.send(ctx, reqs, rt)
	if check == nil {
		return
	}
	var again []*Request
	var at []int
	for i, r := range reqs {
		if r.Replica && w.doubt(check(i)) {
			r.reset()
			again, at = append(again, r), append(at, i)
		}
	}
	if len(again) == 0 {
		return
	}
	w.send(ctx, again, Master)
	for j, r := range again {
		if err := check(at[j]); r.Replica && w.doubt(err) {
			// %v, not %w: the problem is not the master's.
			r.Err = fmt.Errorf("%w: the slot moved while a replica answered %v", ErrTryAgain, err)
		}
	}
}

// send sends reqs as Send does, without the check. A request whose node
// answers MOVED, ASK or the like is sent again through go-redis's routing,
// which follows redirections and retries with backoff; so is a read after a
// network error, since a replica that died is still in the client's map
// until its next reload, and go-redis's own routing falls back to the
// master.
func (w *Wire) send(ctx context.Context, reqs []*Request, rt Route) {
	cl, ok := w.rdb.(*redis.ClusterClient)
	if !ok {
		w.sendTo(ctx, w.rdb, reqs, rt)
		return
	}
	defer reloadAfter(cl, reqs)
	replicas := rt == AnyNode && cl.Options().ReadOnly
	byNode := make(map[*redis.Client][]*Request)
	for _, r := range reqs {
		node, err := cl.MasterForKey(ctx, r.Key)
		if err == nil && replicas {
			var replica *redis.Client
			if replica, err = cl.SlaveForKey(ctx, r.Key); err == nil {
				r.Replica = replica != node
				node = replica
			}
		}
		if err != nil {
			r.Err = err
			continue
		}
		byNode[node] = append(byNode[node], r)
	}
	var wg sync.WaitGroup
	for node, rs := range byNode {
		if len(byNode) == 1 {
			w.sendTo(ctx, node, rs, rt)
			break
		}
		wg.Go(func() { w.sendTo(ctx, node, rs, rt) })
	}
	wg.Wait()
	reloaded := false
	for _, r := range reqs {
		var rerr redis.Error
		retry := r.Err != nil && (Redirected(r.Err) || r.Replica && !errors.As(r.Err, &rerr) && ctx.Err() == nil)
		if !retry {
			continue
		}
		if !reloaded {
			cl.ReloadState(ctx)
			reloaded = true
		}
		w.resend(ctx, cl, r, rt)
	}
	// go-redis's own retries of a redirected request (MaxRedirects, 3 by
	// default, with its backoff) can all fall within the moment that a
	// slot's move takes to settle: the master has handed the slot on, and
	// the client's map, reloaded in the background, does not say so yet.
	// The requests still redirected are sent again after a pause, twice as
	// long each time, up to settleTries times, within ctx.
	for try, pause := 0, settlePause; try < settleTries; try, pause = try+1, 2*pause {
		var redirects []*Request
		for _, r := range reqs {
			if r.Err != nil && Redirected(r.Err) {
				redirects = append(redirects, r)
			}
		}
		if len(redirects) == 0 || !Sleep(ctx, pause) {
			return
		}
		cl.ReloadState(ctx)
		for _, r := range redirects {
			w.resend(ctx, cl, r, rt)
		}
	}
}

// reloadAfter makes cl reload its map of slots to nodes, in the
// background, after a request of reqs failed for want of an answer (a
// refused connection, a timeout): the node may be a master that died, and
// go-redis would otherwise keep calling it until its next periodic reload
// (ClusterOptions.ClusterStateReloadInterval, 60 s by default), long after
// a replica took over. go-redis coalesces the reloads of many failing
// calls into one at a time.
func reloadAfter(cl *redis.ClusterClient, reqs []*Request) {
	for _, r := range reqs {
		var rerr redis.Error
		if r.Err != nil && !errors.As(r.Err, &rerr) && !errors.Is(r.Err, context.Canceled) {
			cl.ReloadState(context.Background())
			return
		}
	}
}

// settleTries and settlePause bound the pauses of send for a slot's move to
// settle: 10, 20, 40, 80 and 160 ms, 310 ms in all.
const (
	settleTries = 5
	settlePause = 10 * time.Millisecond
)

// Sleep waits for d, and reports false, at once, if ctx ends first.
func Sleep(ctx context.Context, d time.Duration) bool {
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
func (w *Wire) resend(ctx context.Context, cl *redis.ClusterClient, r *Request, rt Route) {
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
	if !r.Tx && len(r.Cmds) > 1 && cl.Options().ReadOnly {
		r.reset()
		node, err := cl.MasterForKey(ctx, r.Key)
		if err != nil {
			r.Err = err
			return
		}
		w.sendTo(ctx, node, []*Request{r}, rt)
		return
	}
	r.reset()
	r.Replica = rt != Write && cl.Options().ReadOnly
	cmds := make([]*redis.Cmd, len(r.Cmds))
	add := func(p redis.Pipeliner) error {
		for i, args := range r.Cmds {
			cmds[i] = p.Do(ctx, args...)
		}
		return nil
	}
	var err error
	if r.Tx {
		_, err = cl.TxPipelined(ctx, add)
	} else {
		_, err = cl.Pipelined(ctx, add)
	}
	if err != nil && !anyErr([][]*redis.Cmd{cmds}, nil) {
		r.Err = err
		return
	}
	m := meterOf(ctx)
	for i, cmd := range cmds {
		m.send(r.Cmds[i])
		m.receive(cmd.Val(), cmd.Err())
		r.Record(cmd)
	}
	if rt == Write && w.wait.Replicas > 0 {
		// go-redis chose the connection: no WAIT can confirm it.
		r.Unconfirmed = fmt.Errorf("%w: the write was redirected to another node (the slot moved), where no WAIT can confirm it; the bits are set", ErrNotReplicated)
	}
}
