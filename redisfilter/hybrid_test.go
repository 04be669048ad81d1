package redisfilter_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hybrids opens n replicas of one filter, each with its own client.
func hybrids(t *testing.T, n int, expected int64) ([]*redisfilter.Hybrid[string], *redisfilter.Filter[string]) {
	t.Helper()
	ctx := testContext(t)
	name := filterName(t)
	hs := make([]*redisfilter.Hybrid[string], n)
	var remote *redisfilter.Filter[string]
	for i := range hs {
		f, err := redisfilter.Open(ctx, sharedClient(t), name, funnel.String, expected, 0.01)
		require.NoError(t, err)
		remote = f
		hs[i], err = redisfilter.NewHybrid(ctx, f)
		require.NoError(t, err)
	}
	t.Cleanup(func() { remote.Delete(context.Background()) })
	return hs, remote
}

// TestHybridSync: replicas put disjoint keys locally; nothing travels until
// they sync, after which every replica and Redis hold the union, bit for
// bit.
func TestHybridSync(t *testing.T) {
	const replicas, perReplica = 4, 1000
	ctx := testContext(t)
	r := rand.New(rand.NewPCG(13, 14))
	hs, remote := hybrids(t, replicas, replicas*perReplica)
	all := randomStrings(r, replicas*perReplica)
	want, err := bloom.New(funnel.String, replicas*perReplica, 0.01)
	require.NoError(t, err)
	for _, v := range all {
		want.Put(v)
	}
	for i, h := range hs {
		mine := all[i*perReplica : (i+1)*perReplica]
		if i%2 == 1 {
			// Half the replicas put in batches, which must be pushed too.
			h.PutMany(mine)
			for j, found := range h.MightContainMany(nil, mine) {
				assert.True(t, found, "a replica does not see its own PutMany of %q at once", mine[j])
			}
			continue
		}
		for _, v := range mine {
			assert.True(t, h.Put(v), "Put(%q) of a new value", v)
			assert.True(t, h.MightContain(v), "a replica does not see its own put at once")
		}
	}
	// Before any sync, replica 1 has not seen replica 0's keys, and Redis
	// nothing.
	seen := 0
	for _, v := range all[:perReplica] {
		if hs[1].MightContain(v) {
			seen++
		}
	}
	assert.Less(t, seen, perReplica/10, "replica 1 sees replica 0's keys before any sync")
	count, err := remote.BitCount(ctx)
	require.NoError(t, err)
	assert.Zero(t, count, "Redis has bits before any sync")

	// One round pushes everything; the second pulls in what the first
	// replicas to sync could not see yet.
	before := time.Now()
	for range 2 {
		for _, h := range hs {
			require.NoError(t, h.Sync(ctx))
		}
	}
	snap, err := remote.Snapshot(ctx)
	require.NoError(t, err)
	assert.True(t, snap.Equal(want), "Redis differs from the union of the replicas")
	for i, h := range hs {
		assert.True(t, h.Copy().Equal(want), "replica %d differs from the union after syncing", i)
		assert.False(t, h.LastSync().Before(before), "replica %d: LastSync did not advance", i)
	}
}

// TestHybridPutsDuringSync races puts against syncs: a put that runs while
// a Sync reads the local filter must be pushed by a later Sync, never lost.
func TestHybridPutsDuringSync(t *testing.T) {
	const writers, perWriter = 4, 2000
	ctx := testContext(t)
	hs, remote := hybrids(t, 1, writers*perWriter)
	h := hs[0]
	values := randomStrings(rand.New(rand.NewPCG(15, 16)), writers*perWriter)

	var wg sync.WaitGroup
	var done atomic.Bool
	var syncs atomic.Int64
	syncErr := make(chan error, 1)
	go func() {
		defer close(syncErr)
		for !done.Load() {
			if err := h.Sync(ctx); err != nil {
				syncErr <- err
				return
			}
			syncs.Add(1)
		}
	}()
	for w := range writers {
		wg.Go(func() {
			for _, v := range values[w*perWriter : (w+1)*perWriter] {
				h.Put(v)
			}
		})
	}
	wg.Wait()
	done.Store(true)
	require.NoError(t, <-syncErr)
	require.NoError(t, h.Sync(ctx))
	t.Logf("%d syncs ran during the puts", syncs.Load())

	found, err := remote.MightContainMany(ctx, nil, values)
	require.NoError(t, err)
	missing := 0
	for _, ok := range found {
		if !ok {
			missing++
		}
	}
	assert.Zero(t, missing, "puts lost between the local filter and Redis")
	snap, err := remote.Snapshot(ctx)
	require.NoError(t, err)
	assert.True(t, snap.Equal(h.Copy()), "Redis and the only replica differ after a final Sync")
}

// TestHybridPutBehindAnother puts a value whose bits another goroutine's
// PutMany has just set, among 127 others it is still setting: the Put
// changes nothing, and the Sync that follows it must push the value all
// the same, since the Put returned before the Sync started.
func TestHybridPutBehindAnother(t *testing.T) {
	ctx := testContext(t)
	hs := deltaHybrids(ctx, t, sharedClient(t), 1)
	h := hs[0]
	f, err := redisfilter.Open(ctx, sharedClient(t), filterName(t), funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(17, 18))
	var seen []string
	missing := 0
	const rounds = 100
	for range rounds {
		batch := randomStrings(r, 128, seen)
		seen = append(seen, batch...)
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.PutMany(batch)
		}()
		for !h.MightContain(batch[0]) {
			runtime.Gosched()
		}
		assert.False(t, h.Put(batch[0]), "a Put of a value whose bits are set")
		require.NoError(t, h.Sync(ctx))
		ok, err := f.MightContain(ctx, batch[0])
		require.NoError(t, err)
		if !ok {
			missing++
		}
		<-done
	}
	assert.Zero(t, missing, "of %d values put after another goroutine set their bits, Redis lacks some after a Sync", rounds)
}

// TestHybridRebuildsLostFilter: when Redis loses the filter, the next Sync
// re-creates it from the replica's local copy.
func TestHybridRebuildsLostFilter(t *testing.T) {
	ctx := testContext(t)
	hs, remote := hybrids(t, 2, 1000)
	values := randomStrings(rand.New(rand.NewPCG(17, 18)), 200)
	for _, v := range values[:100] {
		hs[0].Put(v)
	}
	for _, v := range values[100:] {
		hs[1].Put(v)
	}
	require.NoError(t, hs[0].Sync(ctx))
	require.NoError(t, remote.Delete(ctx))

	// hs[1] has unpushed puts and finds the filter gone: it re-creates it
	// and pushes everything it has.
	require.NoError(t, hs[1].Sync(ctx))
	// A Filter opened before the loss does not read the rebuilt filter as
	// its own: it lacks hs[0]'s values so far.
	_, err := remote.MightContainMany(ctx, nil, values[:100])
	require.ErrorIs(t, err, redisfilter.ErrLost)
	reopened, err := redisfilter.Open(ctx, sharedClient(t), remote.Keys()[0][1:len(remote.Keys()[0])-1], funnel.String, 1000, 0.01)
	require.NoError(t, err)
	found, err := reopened.MightContainMany(ctx, nil, values[100:])
	require.NoError(t, err)
	assert.NotContains(t, found, false, "hs[1]'s values are missing from the re-created filter")

	// hs[0] pushed before the loss and has nothing new: its Sync finds the
	// filter re-created and pushes its whole local filter.
	require.NoError(t, hs[0].Sync(ctx))
	found, err = reopened.MightContainMany(ctx, nil, values)
	require.NoError(t, err)
	assert.NotContains(t, found, false, "values missing from the rebuilt filter")
	for i, h := range hs {
		for _, v := range values[i*100 : (i+1)*100] {
			assert.True(t, h.MightContain(v), "replica %d lost its own value %q", i, v)
		}
	}
}

// TestHybridRun runs two replicas with Run and waits, for a bounded time,
// until a put on one is seen by the other.
func TestHybridRun(t *testing.T) {
	ctx := testContext(t)
	hs, _ := hybrids(t, 2, 1000)
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var failures atomic.Int64
	for _, h := range hs {
		wg.Go(func() {
			h.Run(runCtx, 10*time.Millisecond, func(err error) {
				failures.Add(1)
				t.Errorf("Sync: %v", err)
			})
		})
	}
	hs[0].Put("from replica 0")
	redistest.WaitFor(t, "replica 1 to see replica 0's put", 30*time.Second, func() (bool, error) {
		return hs[1].MightContain("from replica 0"), nil
	})
	stop()
	wg.Wait()
	assert.Zero(t, failures.Load())
}

// TestHybridZeroAllocs requires the local side of a Hybrid to allocate
// nothing, as bloom.Filter's Put and MightContain do.
func TestHybridZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random, so allocation counts mean nothing; .ci/run also runs this test without -race")
	}
	hs, _ := hybrids(t, 1, 1000)
	h := hs[0]
	i := 0
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		h.Put(strconv.Itoa(i % 10)) // small ints format without allocating
		i++
	}), "Put")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { h.MightContain("x") }), "MightContain")
}

// TestHybridLocalStats requires BitSize, NumHashFunctions and BitCount to
// be those of the local filter, before and after a Sync pulls another
// replica's puts.
func TestHybridLocalStats(t *testing.T) {
	ctx := testContext(t)
	hs, remote := hybrids(t, 2, 1000)
	check := func(h *redisfilter.Hybrid[string], what string) {
		t.Helper()
		local := h.Copy()
		assert.Equal(t, local.BitSize(), h.BitSize(), what)
		assert.Equal(t, remote.BitSize(), h.BitSize(), what)
		assert.Equal(t, local.NumHashFunctions(), h.NumHashFunctions(), what)
		assert.Equal(t, local.BitCount(), h.BitCount(), what)
	}
	check(hs[1], "empty")
	assert.Zero(t, hs[1].BitCount())
	for _, v := range randomStrings(rand.New(rand.NewPCG(19, 20)), 300) {
		hs[0].Put(v)
	}
	check(hs[0], "after local puts")
	assert.Positive(t, hs[0].BitCount())
	require.NoError(t, hs[0].Sync(ctx))
	require.NoError(t, hs[1].Sync(ctx))
	check(hs[1], "after a Sync")
	assert.Equal(t, hs[0].BitCount(), hs[1].BitCount(), "the replicas hold the same bits")
}

// TestHybridAfterSync requires AfterSync's functions to see every Sync,
// failed or not, as Stats reports it in Last, in order, until stopped; and
// functions to be added and stopped while Syncs run.
func TestHybridAfterSync(t *testing.T) {
	ctx := testContext(t)
	hs, _ := hybrids(t, 1, 1000)
	h := hs[0]
	var seen []redisfilter.SyncStats // only Syncs write it, one at a time
	stop := h.AfterSync(func(st redisfilter.SyncStats) { seen = append(seen, st) })

	h.Put("a")
	require.NoError(t, h.Sync(ctx))
	require.Len(t, seen, 1)
	assert.Equal(t, h.Stats().Last, seen[0])
	assert.Equal(t, 1, seen[0].Pushed)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	err := h.Sync(cancelled)
	require.Error(t, err)
	require.Len(t, seen, 2)
	assert.Equal(t, h.Stats().Last, seen[1])
	assert.ErrorIs(t, seen[1].Err, context.Canceled)
	assert.True(t, seen[0].Start.Before(seen[1].Start), "in the order of the Syncs")

	stop()
	stop()
	require.NoError(t, h.Sync(ctx))
	assert.Len(t, seen, 2, "a stopped function was called")

	// Functions come and go while Syncs run; each is called for the Syncs
	// that end while it is registered, and for no Sync that starts after
	// it is stopped; the last one stays.
	var syncer, changers sync.WaitGroup
	var done atomic.Bool
	var syncs atomic.Int64
	syncer.Go(func() {
		for !done.Load() {
			if err := h.Sync(ctx); err != nil {
				t.Errorf("Sync: %v", err)
				return
			}
			syncs.Add(1)
		}
	})
	var last atomic.Int64
	defer h.AfterSync(func(redisfilter.SyncStats) { last.Add(1) })()
	// wait waits for cond, failing t if the Syncs do not bring it.
	wait := func(what string, cond func() bool) bool {
		if err := redistest.Poll(time.Minute, func() (bool, error) { return cond(), nil }); err != nil {
			t.Errorf("waited for %s: %v", what, err)
			return false
		}
		return true
	}
	for range 4 {
		changers.Go(func() {
			for range 50 {
				var n atomic.Int64
				stop := h.AfterSync(func(redisfilter.SyncStats) { n.Add(1) })
				if !wait("a Sync to end while a function is registered", func() bool { return n.Load() > 0 }) {
					return
				}
				stop()
				after := n.Load()
				// The Sync that was ending, and one that began after.
				s := syncs.Load()
				if !wait("two Syncs after stop", func() bool { return syncs.Load() >= s+2 }) {
					return
				}
				assert.LessOrEqual(t, n.Load()-after, int64(1), "calls after stop returned, beyond the Sync that was ending")
			}
		})
	}
	changers.Wait()
	done.Store(true)
	syncer.Wait()
	before := last.Load()
	require.NoError(t, h.Sync(ctx))
	assert.Equal(t, before+1, last.Load())
	t.Logf("%d syncs ran beside the changes", syncs.Load())
}
