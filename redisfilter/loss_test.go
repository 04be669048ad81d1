package redisfilter_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// TestPartialLoss loses the shards of a filter that one node serves (on
// the cluster, every shard of a master that does not serve the first; on
// one server, two shards) after a Filter put values that a Hybrid has not
// pulled yet: a Hybrid's Sync, or an Open WithRecreate, creates again the
// shards lost and no other, so that every value with no bit in them still
// answers true, in Redis and in the Hybrid's copy. The bits of the shards
// that survived are never cleared: a library may report a loss, never
// cause one.
func TestPartialLoss(t *testing.T) {
	for _, how := range []string{"Sync", "WithRecreate"} {
		t.Run(how, func(t *testing.T) {
			eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
				ctx := testContext(t)
				name := filterName(t)
				f := openSharded(ctx, t, rdb, name, 300_000) // 6 shards
				h, err := redisfilter.NewHybrid(ctx, f)
				require.NoError(t, err)
				other, err := redisfilter.NewHybrid(ctx, f)
				require.NoError(t, err)
				values := randomStrings(rand.New(rand.NewPCG(71, 72)), 3000)
				require.NoError(t, f.PutMany(ctx, values))
				// A Merge, so that the servers know merge.lua: a script
				// they do not know is sent twice, by its SHA-1 and again.
				require.NoError(t, f.Merge(ctx, mustLocal(t, 300_000)))
				lost := lostShards(ctx, t, rdb, f)
				var survived []string
				for _, v := range values {
					touched := false
					for _, s := range lost {
						touched = touched || touches(f, v, s)
					}
					if !touched {
						survived = append(survived, v)
					}
				}
				require.NotEmpty(t, survived)
				t.Logf("shards %v lost; %d of %d values have no bit in them", lost, len(survived), len(values))
				for _, s := range lost {
					require.NoError(t, rdb.Del(ctx, f.Keys()[s], f.ConfigKeys()[s], f.Keys()[s]+":hold", f.Keys()[s]+":changes").Err())
				}

				if how == "Sync" {
					// The Hybrid that rebuilds the filter, and another that
					// finds it rebuilt, each push and pull the shards lost,
					// and no other.
					for i, h := range []*redisfilter.Hybrid[string]{h, other} {
						require.NoError(t, h.Sync(ctx))
						st := h.Stats().Last
						t.Logf("Hybrid %d: %v", i, st)
						assert.Equal(t, len(lost), st.FullPulls, "shards read whole: the lost ones only")
						assert.True(t, st.FullPush, "the shards lost are pushed whole")
						assert.Less(t, st.Sent, int64(len(lost)+1)*shardBytes, "pushed more than the shards lost")
						for i, ok := range h.MightContainMany(nil, survived) {
							require.True(t, ok, "%q is missing from the Hybrid's copy", survived[i])
						}
					}
				} else {
					_, err := redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes), redisfilter.WithRecreate())
					require.NoError(t, err)
				}
				again, err := redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
				require.NoError(t, err)
				found, err := again.MightContainMany(ctx, nil, survived)
				require.NoError(t, err)
				missing := 0
				for _, ok := range found {
					if !ok {
						missing++
					}
				}
				assert.Zero(t, missing, "values that survived the loss answer false")
			})
		})
	}
}

// lostShards returns the shards of f that one node serves: on a cluster,
// those of a master that does not serve the first shard, and on one
// server shards 2 and 4.
func lostShards(ctx context.Context, t *testing.T, rdb redis.UniversalClient, f *redisfilter.Filter[string]) []int {
	t.Helper()
	cl, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return []int{2, 4}
	}
	first, err := cl.MasterForKey(ctx, f.Keys()[0])
	require.NoError(t, err)
	byNode := map[string][]int{}
	for s, key := range f.Keys() {
		node, err := cl.MasterForKey(ctx, key)
		require.NoError(t, err)
		if node.Options().Addr != first.Options().Addr {
			byNode[node.Options().Addr] = append(byNode[node.Options().Addr], s)
		}
	}
	var lost []int
	for _, shards := range byNode {
		if len(shards) > len(lost) {
			lost = shards
		}
	}
	require.NotEmpty(t, lost, "every shard is on the first shard's master")
	return lost
}

// TestHybridHistoryOfOneShard makes a Hybrid find the log of one shard
// other than it saw it, as after a failover that lost writes: its next Sync
// pushes that shard of its filter whole and reads it whole, and no other.
// A server of another replication ID whose log holds what the Hybrid saw
// costs nothing whole.
func TestHybridHistoryOfOneShard(t *testing.T) {
	ctx := testContext(t)
	hs := deltaHybrids(ctx, t, sharedClient(t), 1)
	h := hs[0]
	h.PutMany(randomStrings(rand.New(rand.NewPCG(73, 74)), 2000))
	require.NoError(t, h.Sync(ctx))
	redisfilter.ForgetHistory(h, 2)
	require.NoError(t, h.Sync(ctx))
	st := h.Stats().Last
	t.Log("another replication ID: ", st)
	assert.False(t, st.FullPush)
	assert.Zero(t, st.FullPulls)
	redisfilter.MisrememberLog(h, 3)
	require.NoError(t, h.Sync(ctx))
	st = h.Stats().Last
	t.Log("another log: ", st)
	assert.True(t, st.FullPush)
	assert.Equal(t, redisfilter.FullPushHistory, st.FullPushReason)
	assert.Equal(t, 1, st.FullPulls)
	// One shard of 64 KiB, sent twice if the server did not know merge.lua
	// yet, where the filter is of 6.
	assert.Less(t, st.Sent, int64(3*shardBytes), "pushed more than the shard")
	require.NoError(t, h.Sync(ctx))
	st = h.Stats().Last
	assert.False(t, st.FullPush, "the Sync after")
	assert.Zero(t, st.FullPulls, "the Sync after")
}

// A lossyPair is a master and its replica behind one client, whose
// connections go to the master until failOver sends them to the replica,
// as a client behind a proxy or a DNS name sees a failover: detach makes
// the replica a master of its own (REPLICAOF NO ONE, which gives it a new
// replication ID) once it has every write so far, so that it lacks the
// writes that follow, and failOver kills the master. It is a failover that
// loses writes, in steps a test controls.
type lossyPair struct {
	master, replica *redistest.Server
	addr            atomic.Pointer[string]
	rdb             *redis.Client
}

func newLossyPair(t *testing.T) *lossyPair {
	t.Helper()
	master, replica := masterWithReplica(t)
	p := &lossyPair{master: master, replica: replica}
	addr := master.Addr()
	p.addr.Store(&addr)
	p.rdb = redis.NewClient(&redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, *p.addr.Load())
		},
	})
	t.Cleanup(func() { p.rdb.Close() })
	return p
}

// detach waits until the replica has every write the master took, and
// makes it a master of its own.
func (p *lossyPair) detach(ctx context.Context, t *testing.T) {
	t.Helper()
	master, replica := newClient(p.master.Socket()), newClient(p.replica.Socket())
	defer master.Close()
	defer replica.Close()
	redistest.WaitFor(t, "the replica to have every write of its master", 30*time.Second, func() (bool, error) {
		m, err := replication(ctx, master, "master_repl_offset")
		if err != nil {
			return false, err
		}
		r, err := replication(ctx, replica, "slave_repl_offset")
		return m == r, fmt.Errorf("master_repl_offset:%s slave_repl_offset:%s (%v)", m, r, err)
	})
	require.NoError(t, replica.ReplicaOf(ctx, "NO", "ONE").Err())
}

// failOver kills the master, and sends the client's connections to the
// replica.
func (p *lossyPair) failOver() {
	p.master.Halt(syscall.SIGKILL)
	addr := p.replica.Addr()
	p.addr.Store(&addr)
}

// failReads is a go-redis hook that fails the next pipeline of read-only
// scripts once armed, as a connection that drops would.
type failReads struct{ armed atomic.Bool }

func (h *failReads) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *failReads) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *failReads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if name := cmd.Name(); (name == "evalsha_ro" || name == "eval_ro") && h.armed.CompareAndSwap(true, false) {
				return io.ErrUnexpectedEOF
			}
		}
		return next(ctx, cmds)
	}
}

// syncUntil makes h Sync until it returns nil, for up to a minute.
func syncUntil(ctx context.Context, t *testing.T, h *redisfilter.Hybrid[string]) {
	t.Helper()
	redistest.WaitFor(t, "a Sync to succeed", time.Minute, func() (bool, error) {
		err := h.Sync(ctx)
		return err == nil, err
	})
}

// TestHybridLossyFailover fails over to a replica that lacks what a Hybrid
// pushed, with Syncs that returned nil, and then gives the Hybrid a log
// that cannot show the loss by its bytes: started again, in a new epoch,
// by another process's Merge of many bits, or holding the Hybrid's
// checkpoint of before the push, which the master had trimmed from its log
// when it took the push, whose Sync then failed before it read the log.
// Either way the server's new replication ID must make the Hybrid push the
// shards whole, so that every value it put is in Redis after its next Sync.
func TestHybridLossyFailover(t *testing.T) {
	redistest.Require(t)
	for _, how := range []string{"log started again", "checkpoint trimmed"} {
		t.Run(how, func(t *testing.T) {
			p := newLossyPair(t)
			hook := &failReads{}
			p.rdb.AddHook(hook)
			ctx := testContext(t)
			small := redisfilter.WithChangeLog(4096)
			h := deltaHybrids(ctx, t, p.rdb, 1, small)[0]
			f, err := redisfilter.Open(ctx, p.rdb, filterName(t), funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes), small)
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(75, 76))
			kept := randomStrings(r, 500)
			h.PutMany(kept)
			require.NoError(t, h.Sync(ctx))
			p.detach(ctx, t)

			lost := randomStrings(r, 500, kept)
			others := randomStrings(r, 3000, kept, lost) // 3,500 bits a shard, of logs of 1,024
			h.PutMany(lost)
			if how == "log started again" {
				require.NoError(t, h.Sync(ctx))
				p.failOver()
				require.NoError(t, f.Merge(ctx, mustLocal(t, 300_000, others...)))
			} else {
				require.NoError(t, f.PutMany(ctx, others))
				hook.armed.Store(true)
				require.Error(t, h.Sync(ctx), "the Sync whose pull failed")
				require.False(t, hook.armed.Load())
				p.failOver()
			}
			after := randomStrings(r, 100, kept, lost, others)
			h.PutMany(after)
			syncUntil(ctx, t, h)
			t.Log(h.Stats())

			found, err := f.MightContainMany(ctx, nil, slices.Concat(kept, lost, after))
			require.NoError(t, err)
			missing := map[string]int{}
			for i, ok := range found {
				if !ok {
					missing[[]string{"kept", "lost", "after"}[i/500]]++
				}
			}
			assert.Empty(t, missing, "values of Syncs that returned nil, missing from Redis")
			assert.Positive(t, h.Stats().FullPushes, "no shard pushed whole")
		})
	}
}
