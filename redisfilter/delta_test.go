package redisfilter_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// deltaHybrids opens n Hybrids over one filter of 300,000 values in shards
// of shardBytes, each with a Filter of its own.
func deltaHybrids(ctx context.Context, t *testing.T, rdb redis.UniversalClient, n int, opts ...redisfilter.Option) []*redisfilter.Hybrid[string] {
	t.Helper()
	return openHybrids(ctx, t, rdb, n, 300_000, append([]redisfilter.Option{redisfilter.WithShardBytes(shardBytes)}, opts...)...)
}

// openHybrids opens n Hybrids over one filter of the test's name for
// expected strings, each with a Filter of its own.
func openHybrids(ctx context.Context, t *testing.T, rdb redis.UniversalClient, n int, expected int64, opts ...redisfilter.Option) []*redisfilter.Hybrid[string] {
	t.Helper()
	name := filterName(t)
	hs := make([]*redisfilter.Hybrid[string], n)
	for i := range hs {
		f, err := redisfilter.Open(ctx, rdb, name, funnel.String, expected, 0.01, opts...)
		require.NoError(t, err)
		if i == 0 {
			t.Cleanup(func() { f.Delete(context.Background()) })
		}
		hs[i], err = redisfilter.NewHybrid(ctx, f)
		require.NoError(t, err)
	}
	return hs
}

// TestHybridDelta checks that a Sync moves what changed: the values put
// locally are pushed as such, the bits others set are pulled from the
// logs, a Sync after no change moves a few bytes per shard, and nothing is
// read whole.
func TestHybridDelta(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		hs := deltaHybrids(ctx, t, rdb, 2)
		a, b := hs[0], hs[1]
		values := randomStrings(rand.New(rand.NewPCG(46, 47)), 100)
		a.PutMany(values[:50])
		for _, v := range values[50:] {
			a.Put(v)
		}
		require.NoError(t, a.Sync(ctx))
		st := a.Stats().Last
		t.Log("a: ", st)
		assert.Equal(t, 100, st.Pushed)
		assert.False(t, st.FullPush)
		assert.Zero(t, st.FullPulls)
		require.NoError(t, b.Sync(ctx))
		st = b.Stats().Last
		t.Log("b: ", st)
		assert.Zero(t, st.FullPulls, "a shard read whole")
		assert.InDelta(t, 700, st.PulledBits, 10, "the bits of 100 values, k = 7")
		assert.Less(t, st.Received, int64(100*7*4+2000), "b received more than the bits a set")
		for i, ok := range b.MightContainMany(nil, values) {
			assert.True(t, ok, "b lacks %q", values[i])
		}
		require.NoError(t, b.Sync(ctx))
		st = b.Stats().Last
		t.Log("b again: ", st)
		assert.Zero(t, st.PulledBits)
		assert.Less(t, st.Sent+st.Received, int64(6*1000), "a Sync with no change")
		assert.Equal(t, int64(2), b.Stats().Syncs)
	})
}

// TestHybridLogTrimmed makes a log drop what a Hybrid has not read: its
// next Sync reads the shards whole, says so, and ends with every value.
func TestHybridLogTrimmed(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		hs := deltaHybrids(ctx, t, rdb, 2, redisfilter.WithChangeLog(4096))
		values := randomStrings(rand.New(rand.NewPCG(48, 49)), 3000) // 21,000 bits: 3,500 a shard
		hs[0].PutMany(values)
		require.NoError(t, hs[0].Sync(ctx))
		require.NoError(t, hs[1].Sync(ctx))
		st := hs[1].Stats().Last
		t.Log(st)
		assert.Positive(t, st.FullPulls, "no shard was read whole")
		for i, ok := range hs[1].MightContainMany(nil, values) {
			require.True(t, ok, "%q is missing", values[i])
		}
		assert.True(t, hs[1].Copy().Equal(hs[0].Copy()))
	})
}

// TestHybridOverflow puts more new values between two Syncs than a Hybrid
// holds the hashes of: the next Sync pushes the whole filter, and says why.
func TestHybridOverflow(t *testing.T) {
	ctx := testContext(t)
	hs := deltaHybrids(ctx, t, sharedClient(t), 2)
	values := randomStrings(rand.New(rand.NewPCG(50, 51)), 5000) // more than 4096
	hs[0].PutMany(values)
	require.NoError(t, hs[0].Sync(ctx))
	st := hs[0].Stats().Last
	t.Log(st)
	assert.True(t, st.FullPush)
	assert.Equal(t, redisfilter.FullPushOverflow, st.FullPushReason)
	require.NoError(t, hs[1].Sync(ctx))
	for i, ok := range hs[1].MightContainMany(nil, values) {
		require.True(t, ok, "%q is missing", values[i])
	}
	hs[0].Put("one more")
	require.NoError(t, hs[0].Sync(ctx))
	assert.False(t, hs[0].Stats().Last.FullPush, "the push after is of changes again")
	assert.Equal(t, int64(1), hs[0].Stats().FullPushes)
}

// TestHybridFleet runs 16 Hybrids over one sharded filter, each putting
// random values and syncing on its own schedule, with change logs small
// enough to be trimmed under them; on the cluster, the master of the first
// shard is killed midway, once it has taken writes after its replica was
// stopped, so that the replica promoted may lack what the sockets' buffers
// did not hold of those bits and log (TestHybridFailover makes sure it
// does). At the end,
// after every Hybrid has synced twice more, every local filter equals the
// filter in Redis, which equals a local filter of every value put, byte for
// byte.
func TestHybridFleet(t *testing.T) {
	t.Run("single", func(t *testing.T) { hybridFleet(t, sharedClient(t), nil) })
	t.Run("cluster", func(t *testing.T) {
		cl, rdb := faultCluster(t)
		hybridFleet(t, rdb, cl)
	})
}

func hybridFleet(t *testing.T, rdb redis.UniversalClient, cl *redistest.Cluster) {
	ctx := testContext(t)
	const fleet = 16
	perHybrid := 1500
	if testing.Short() {
		perHybrid = 300
	}
	hs := deltaHybrids(ctx, t, rdb, fleet, redisfilter.WithChangeLog(16<<10))
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		put     []string
		failed  int
		untyped errorTally
	)
	half := make(chan struct{})
	var halfOnce sync.Once
	for i, h := range hs {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 52))
			for j := range perHybrid {
				v := fmt.Sprintf("h%d-%d-%d", i, j, r.Uint64())
				h.Put(v)
				mu.Lock()
				put = append(put, v)
				n := len(put)
				mu.Unlock()
				if n == fleet*perHybrid/2 {
					halfOnce.Do(func() { close(half) })
				}
				if r.IntN(50) == 0 {
					sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					if err := h.Sync(sctx); err != nil {
						untyped.note(err)
						mu.Lock()
						failed++
						mu.Unlock()
					}
					cancel()
				}
			}
		})
	}
	if cl != nil {
		<-half
		crdb := rdb.(*redis.ClusterClient)
		master, err := crdb.MasterForKey(ctx, "{"+filterName(t)+"}")
		require.NoError(t, err)
		victim, replica := masterAndReplica(ctx, t, cl, master)
		require.NoError(t, replica.Signal(syscall.SIGSTOP))
		mc := newClient(victim.Socket())
		defer mc.Close()
		stopped, err := replication(ctx, mc, "master_repl_offset")
		require.NoError(t, err)
		redistest.WaitFor(t, "writes to the master that its stopped replica lacks, or the end of the puts", time.Minute, func() (bool, error) {
			mu.Lock()
			ended := len(put) == fleet*perHybrid
			mu.Unlock()
			offset, err := replication(ctx, mc, "master_repl_offset")
			return ended || (err == nil && offset != stopped), err
		})
		victim.Halt(syscall.SIGKILL)
		require.NoError(t, replica.Signal(syscall.SIGCONT))
		t.Log("killed the first shard's master once it took writes its stopped replica lacks")
	}
	wg.Wait()
	// Every Hybrid syncs until it succeeds, twice over: the first round
	// pushes everything, the second pulls what the first could not see.
	for round := range 3 {
		for i, h := range hs {
			redistest.WaitFor(t, fmt.Sprintf("round %d: a Sync of Hybrid %d to succeed", round, i), time.Minute, func() (bool, error) {
				err := h.Sync(ctx)
				untyped.note(err)
				return err == nil, err
			})
		}
	}
	var stats redisfilter.HybridStats
	for _, h := range hs {
		s := h.Stats()
		stats.Syncs += s.Syncs
		stats.FullPushes += s.FullPushes
		stats.FullPulls += s.FullPulls
		stats.Sent += s.Sent
		stats.Received += s.Received
	}
	t.Logf("%d values put, %d syncs (%d failed), %d full pushes, %d shards read whole, %d bytes sent and %d received in all",
		len(put), stats.Syncs, failed, stats.FullPushes, stats.FullPulls, stats.Sent, stats.Received)
	want, err := bloom.New(funnel.String, 300_000, 0.01)
	require.NoError(t, err)
	for _, v := range put {
		want.Put(v)
	}
	f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
	require.NoError(t, err)
	snap, err := f.Snapshot(ctx)
	require.NoError(t, err)
	checkFleet(t, want, snap, hs, put)
	untyped.check(t)
}

// TestHybridOverflowCarriedOver makes the Sync that finds the ring
// overflowed fail before it pushes: the next Sync pushes the whole filter,
// and still says why.
func TestHybridOverflowCarriedOver(t *testing.T) {
	ctx := testContext(t)
	hs := deltaHybrids(ctx, t, sharedClient(t), 1)
	hs[0].PutMany(randomStrings(rand.New(rand.NewPCG(52, 53)), 5000)) // more than 4096
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.Error(t, hs[0].Sync(cancelled))
	require.NoError(t, hs[0].Sync(ctx))
	st := hs[0].Stats().Last
	assert.True(t, st.FullPush)
	assert.Equal(t, redisfilter.FullPushOverflow, st.FullPushReason)
}
