package redisfilter_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of this file reproduce what goes wrong in a fleet, against real
// servers of their own: eviction, flushes, lost config keys, read-only
// users, a server out of memory.

// TestNames refuses, on every kind of server alike, names that would break
// the hash tag keeping a filter's keys in one cluster slot, and spreads
// filters of good names over the cluster's nodes.
func TestNames(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		base := filterName(t)
		for _, bad := range []string{"", "a}b", "{a}", "a{b", "a#1", "tab\there", "nul\x00", "\xff", strings.Repeat("x", 257)} {
			_, err := redisfilter.Open(ctx, rdb, bad, funnel.String, 100, 0.01)
			assert.ErrorIs(t, err, bloom.ErrInvalidArgument, "%q", bad)
			_, err = redisfilter.OpenWindowed(ctx, rdb, bad, funnel.String, 100, 0.01, time.Hour, 2)
			assert.ErrorIs(t, err, bloom.ErrInvalidArgument, "windowed %q", bad)
		}
		_, err := redisfilter.Open(ctx, rdb, "a}b", funnel.String, 100, 0.01)
		t.Log(err)
		assert.Empty(t, keysMatching(t, rdb, "*a}b*"), "a refused name created keys")
		for _, good := range []string{"users:seen", "tenant/7 ips", "héllo", strings.Repeat("x", 256-len(base))} {
			f, err := redisfilter.Open(ctx, rdb, base+good, funnel.String, 100, 0.01)
			require.NoError(t, err, "%q", good)
			t.Cleanup(func() { f.Delete(context.Background()) })
			require.NoError(t, f.PutMany(ctx, []string{"a", "b"}))
			require.NoError(t, f.Merge(ctx, mustLocal(t, 100, "c")))
			found, err := f.MightContainMany(ctx, nil, []string{"a", "b", "c"})
			require.NoError(t, err)
			assert.Equal(t, []bool{true, true, true}, found)
		}
	})
}

// mustLocal returns a local filter of strings for n values at p = 0.01
// holding values.
func mustLocal(t testing.TB, n int64, values ...string) *bloom.Filter[string] {
	t.Helper()
	local, err := bloom.New(funnel.String, n, 0.01)
	require.NoError(t, err)
	for _, v := range values {
		local.Put(v)
	}
	return local
}

// TestClusterSpreadsFilters opens filters of many names on the cluster: each
// filter's keys share one slot, and the filters land on every master.
func TestClusterSpreadsFilters(t *testing.T) {
	rdb := sharedCluster(t)
	ctx := testContext(t)
	masters := map[string]bool{}
	for i := range 24 {
		name := filterName(t) + "-" + strconv.Itoa(i)
		f, err := redisfilter.Open(ctx, rdb, name, funnel.String, 100, 0.01)
		require.NoError(t, err)
		t.Cleanup(func() { f.Delete(context.Background()) })
		_, err = f.Put(ctx, "x")
		require.NoError(t, err)
		slot, err := rdb.ClusterKeySlot(ctx, f.Keys()[0]).Result()
		require.NoError(t, err)
		cfgSlot, err := rdb.ClusterKeySlot(ctx, f.ConfigKeys()[0]).Result()
		require.NoError(t, err)
		require.Equal(t, slot, cfgSlot, "the keys of %q are in different slots", name)
		node, err := rdb.MasterForKey(ctx, f.Keys()[0])
		require.NoError(t, err)
		masters[node.Options().Addr] = true
	}
	assert.Len(t, masters, 3, "24 filters did not land on all 3 masters")
}

// fillUntil writes keys of 64 KiB (with an expiry if volatile) until gone
// reports true, at most 2000 of them, and reports whether it did.
func fillUntil(t *testing.T, rdb *redis.Client, volatile bool, gone func() bool) bool {
	t.Helper()
	ctx := testContext(t)
	value := strings.Repeat("x", 64<<10)
	ttl := time.Duration(0)
	if volatile {
		ttl = time.Hour
	}
	for i := range 2000 {
		// An OOM error while the server evicts is fine: it is full.
		rdb.Set(ctx, "fill:"+strconv.Itoa(i), value, ttl)
		if i%10 == 9 && gone() {
			return true
		}
	}
	return false
}

// limitMemory sets the server's maxmemory to what it uses now plus extra.
func limitMemory(t *testing.T, rdb *redis.Client, extra int64) {
	t.Helper()
	ctx := testContext(t)
	info, err := rdb.Info(ctx, "memory").Result()
	require.NoError(t, err)
	var used int64
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			used, err = strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
		}
	}
	require.Positive(t, used)
	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used+extra, 10)).Err())
}

// TestEviction: on allkeys-lru, Open refuses unless allowed; with eviction
// allowed and the filter evicted, no call answers: every one is ErrLost,
// and the next replica's Open does not create a fresh, empty bitmap under
// the old config.
func TestEviction(t *testing.T) {
	srv := redistest.New(t, "--maxmemory-policy", "allkeys-lru")
	rdb := newClient(srv.Addr())
	t.Cleanup(func() { rdb.Close() })
	ctx := testContext(t)
	_, err := redisfilter.Open(ctx, rdb, "evicted", funnel.String, 20000, 0.01)
	require.ErrorIs(t, err, redisfilter.ErrEvictable)
	assert.ErrorContains(t, err, "allkeys-lru")
	t.Log(err)
	n, err := rdb.DBSize(ctx).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "a refused Open created keys")

	f, err := redisfilter.Open(ctx, rdb, "evicted", funnel.String, 20000, 0.01, redisfilter.WithEvictionAllowed())
	require.NoError(t, err)
	values := randomStrings(rand.New(rand.NewPCG(31, 32)), 20000)
	require.NoError(t, f.PutMany(ctx, values))

	limitMemory(t, rdb, 4<<20)
	gone := func() bool {
		n, err := rdb.Exists(ctx, f.Keys()[0], f.ConfigKeys()[0]).Result()
		return err == nil && n < 2
	}
	require.True(t, fillUntil(t, rdb, false, gone), "the filter was never evicted")
	bitmap, _ := rdb.Exists(ctx, f.Keys()[0]).Result()
	config, _ := rdb.Exists(ctx, f.ConfigKeys()[0]).Result()
	t.Logf("evicted: bitmap %t, config key %t", bitmap == 0, config == 0)
	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory", "0").Err())

	assertLost(t, f, 20000)
	found, err := f.MightContainMany(ctx, nil, values)
	require.ErrorIs(t, err, redisfilter.ErrLost)
	assert.Empty(t, found)

	next, err := redisfilter.Open(ctx, rdb, "evicted", funnel.String, 20000, 0.01, redisfilter.WithEvictionAllowed())
	if config == 1 || bitmap == 1 {
		require.ErrorIs(t, err, redisfilter.ErrLost, "the next replica's Open")
		t.Log(err)
	} else {
		// Both keys gone leave nothing to tell the filter ever existed:
		// Open creates it, and the Filters of the old one still fail.
		require.NoError(t, err)
		_, err = next.Put(ctx, "x")
		require.NoError(t, err)
		assertLost(t, f, 20000)
	}
}

// TestWindowEviction: a windowed filter is refused on volatile-lru unless
// allowed; with eviction allowed and the current generation evicted, reads,
// puts and its snapshot are ErrLost, not empty.
func TestWindowEviction(t *testing.T) {
	srv := redistest.New(t, "--maxmemory-policy", "volatile-lru")
	rdb := newClient(srv.Addr())
	t.Cleanup(func() { rdb.Close() })
	ctx := testContext(t)
	_, err := redisfilter.OpenWindowed(ctx, rdb, "window", funnel.String, 20000, 0.01, time.Hour, 3)
	require.ErrorIs(t, err, redisfilter.ErrEvictable)
	// A plain filter has no expiry, which volatile-* policies never evict.
	_, err = redisfilter.Open(ctx, rdb, "plain", funnel.String, 100, 0.01)
	require.NoError(t, err)

	w, err := redisfilter.OpenWindowed(ctx, rdb, "window", funnel.String, 20000, 0.01, time.Hour, 3, redisfilter.WithEvictionAllowed())
	require.NoError(t, err)
	values := randomStrings(rand.New(rand.NewPCG(33, 34)), 20000)
	gen := w.Generation(time.Now())
	require.NoError(t, w.PutMany(ctx, values))
	require.Equal(t, gen, w.Generation(time.Now()), "the hour ended during the test")

	limitMemory(t, rdb, 4<<20)
	gone := func() bool {
		n, err := rdb.Exists(ctx, w.GenerationKeys(gen)[0]).Result()
		return err == nil && n == 0
	}
	require.True(t, fillUntil(t, rdb, true, gone), "the generation was never evicted")
	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory", "0").Err())

	found, err := w.MightContainMany(ctx, nil, values)
	require.ErrorIs(t, err, redisfilter.ErrLost)
	assert.Empty(t, found)
	t.Log(err)
	_, err = w.MightContain(ctx, values[0])
	assert.ErrorIs(t, err, redisfilter.ErrLost)
	_, err = w.Put(ctx, "new")
	assert.ErrorIs(t, err, redisfilter.ErrLost, "a Put would re-create the generation, empty, under the others")
	_, err = w.Snapshot(ctx, gen)
	assert.ErrorIs(t, err, redisfilter.ErrLost)
	// Generations that never existed still read as empty.
	empty, err := w.Snapshot(ctx, gen-1)
	require.NoError(t, err)
	assert.Zero(t, empty.BitCount())
}

// TestWindowLost deletes a generation: it is ErrLost until it would have
// expired, on every kind of server.
func TestWindowLost(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		clk := bloomtest.NewClock(time.Now())
		w, err := redisfilter.OpenWindowed(ctx, rdb, filterName(t), funnel.String, 100, 0.01, time.Hour, 2, redisfilter.WithClock(clk))
		require.NoError(t, err)
		gen := w.Generation(clk.Now())
		_, err = w.Put(ctx, "a")
		require.NoError(t, err)
		clk.Advance(time.Hour)
		_, err = w.Put(ctx, "b")
		require.NoError(t, err)
		require.NoError(t, rdb.Del(ctx, w.GenerationKeys(gen)[0]).Err())
		_, err = w.MightContain(ctx, "b")
		assert.ErrorIs(t, err, redisfilter.ErrLost, "a generation in the window is gone")
		_, err = w.Snapshot(ctx, gen)
		assert.ErrorIs(t, err, redisfilter.ErrLost)
		snap, err := w.Snapshot(ctx, gen+1)
		require.NoError(t, err)
		assert.True(t, snap.MightContain("b"))
		// Once the lost generation has left the window, reads work again.
		clk.Advance(time.Hour)
		found, err := w.MightContainMany(ctx, nil, []string{"a", "b"})
		require.NoError(t, err)
		assert.Equal(t, []bool{false, true}, found)
	})
}

// TestFlushAll empties the server under a Filter and a Windowed in use.
func TestFlushAll(t *testing.T) {
	srv := redistest.New(t)
	rdb := newClient(srv.Addr())
	t.Cleanup(func() { rdb.Close() })
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, "flushed", funnel.String, 1000, 0.01)
	require.NoError(t, err)
	require.NoError(t, f.PutMany(ctx, []string{"a", "b"}))
	w, err := redisfilter.OpenWindowed(ctx, rdb, "flushed-window", funnel.String, 1000, 0.01, time.Hour, 2)
	require.NoError(t, err)
	_, err = w.Put(ctx, "a")
	require.NoError(t, err)

	require.NoError(t, rdb.FlushAll(ctx).Err())
	assertLost(t, f, 1000)
	_, err = w.MightContain(ctx, "a")
	assert.ErrorIs(t, err, redisfilter.ErrLost)
	_, err = w.Put(ctx, "a")
	assert.ErrorIs(t, err, redisfilter.ErrLost)
}

// TestAdopt deletes a filter's config key: calls fail, Open says what to
// do, and WithAdopt takes the bitmap back with its bits; a bitmap of another
// length is never adopted.
func TestAdopt(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		name := filterName(t)
		f, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1000, 0.01)
		require.NoError(t, err)
		t.Cleanup(func() { f.Delete(context.Background()) })
		values := randomStrings(rand.New(rand.NewPCG(35, 36)), 500)
		require.NoError(t, f.PutMany(ctx, values))
		require.NoError(t, rdb.Del(ctx, f.ConfigKeys()[0]).Err())
		assertLost(t, f, 1000)

		_, err = redisfilter.Open(ctx, rdb, name, funnel.String, 1000, 0.01)
		require.ErrorIs(t, err, redisfilter.ErrLost)
		assert.ErrorContains(t, err, "WithAdopt")
		_, err = redisfilter.Open(ctx, rdb, name, funnel.String, 2000, 0.01, redisfilter.WithAdopt())
		assert.ErrorIs(t, err, redisfilter.ErrNotFilter, "a bitmap of another length")

		adopted, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1000, 0.01, redisfilter.WithAdopt())
		require.NoError(t, err)
		found, err := adopted.MightContainMany(ctx, nil, values)
		require.NoError(t, err)
		assert.NotContains(t, found, false, "adopting lost bits")
		snap, err := adopted.Snapshot(ctx)
		require.NoError(t, err)
		assert.True(t, snap.Equal(mustLocal(t, 1000, values...)))
		// Other replicas open it as usual again.
		again, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1000, 0.01)
		require.NoError(t, err)
		_, err = again.Put(ctx, "x")
		require.NoError(t, err)
	})
}

// TestOutOfMemory lowers maxmemory under noeviction below what the server
// uses: writes are ErrOutOfMemory, and reads, Snapshot and a Hybrid's pull
// go on.
func TestOutOfMemory(t *testing.T) {
	srv := redistest.New(t, "--maxmemory-policy", "noeviction")
	rdb := newClient(srv.Addr())
	t.Cleanup(func() { rdb.Close() })
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, "full", funnel.String, 100000, 0.01)
	require.NoError(t, err)
	values := randomStrings(rand.New(rand.NewPCG(39, 40)), 2000)
	require.NoError(t, f.PutMany(ctx, values[:1000]))
	h, err := redisfilter.NewHybrid(ctx, f)
	require.NoError(t, err)
	h.PutMany(values[1000:1500]) // to push

	limitMemory(t, rdb, -(100 << 10))
	_, err = f.Put(ctx, values[1500])
	require.ErrorIs(t, err, redisfilter.ErrOutOfMemory)
	t.Log(err)
	assert.ErrorIs(t, f.PutMany(ctx, values[1500:]), redisfilter.ErrOutOfMemory)
	assert.ErrorIs(t, f.Merge(ctx, h.Copy()), redisfilter.ErrOutOfMemory)

	found, err := f.MightContainMany(ctx, nil, values[:1000])
	require.NoError(t, err)
	assert.NotContains(t, found, false)
	snap, err := f.Snapshot(ctx)
	require.NoError(t, err)
	assert.True(t, snap.Equal(mustLocal(t, 100000, values[:1000]...)))
	_, err = f.BitCount(ctx)
	require.NoError(t, err)

	// Another replica's puts, made before the memory ran out, reach the
	// Hybrid although its own push is refused.
	before := h.LastSync()
	err = h.Sync(ctx)
	assert.ErrorIs(t, err, redisfilter.ErrOutOfMemory)
	assert.True(t, h.LastSync().After(before), "the Hybrid did not pull")

	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory", "0").Err())
	require.NoError(t, h.Sync(ctx))
	found, err = f.MightContainMany(ctx, nil, values[:1500])
	require.NoError(t, err)
	assert.NotContains(t, found, false, "the Hybrid's push after the memory came back")
}

// TestSlotMigrating migrates the slot of a windowed filter, whose reads
// name generations that do not exist: while the slot is migrating, such a
// read is refused by Redis with TRYAGAIN, which go-redis retries and then
// returns as an error wrapping ErrTryAgain, never as an answer; a Put,
// all of whose keys are still on the source, keeps working, and once the
// slot is stable the window answers again.
func TestSlotMigrating(t *testing.T) {
	rdb := sharedCluster(t)
	ctx := testContext(t)
	name := filterName(t)
	w, err := redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 100, 0.01, time.Hour, 2)
	require.NoError(t, err)
	_, err = w.Put(ctx, "a")
	require.NoError(t, err)
	slot, err := rdb.ClusterKeySlot(ctx, w.ConfigKeys()[0]).Result()
	require.NoError(t, err)
	source, err := rdb.MasterForKey(ctx, w.ConfigKeys()[0])
	require.NoError(t, err)
	sourceID, err := source.ClusterMyID(ctx).Result()
	require.NoError(t, err)
	var (
		mu       sync.Mutex
		target   *redis.Client
		targetID string
	)
	require.NoError(t, rdb.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		id, err := node.ClusterMyID(ctx).Result()
		mu.Lock()
		defer mu.Unlock()
		if err == nil && id != sourceID {
			target, targetID = node, id
		}
		return err
	}))
	require.NotNil(t, target, "no other master")
	stable := func() {
		for _, node := range []*redis.Client{source, target} {
			assert.NoError(t, node.Do(context.Background(), "CLUSTER", "SETSLOT", slot, "STABLE").Err())
		}
	}
	require.NoError(t, target.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", sourceID).Err())
	require.NoError(t, source.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", targetID).Err())
	migrating := true
	t.Cleanup(func() {
		if migrating {
			stable()
		}
	})

	// The reads are plain commands, each sent where its key is: go-redis
	// follows ASK for the generations not on the source.
	found, err := w.MightContain(ctx, "a")
	require.NoError(t, err, "a window read while its slot migrates")
	assert.True(t, found, "a value put before the migration")
	_, err = w.Put(ctx, "b")
	require.NoError(t, err, "a Put into an existing generation while its slot migrates")

	stable()
	migrating = false
	both, err := w.MightContainMany(ctx, nil, []string{"a", "b"})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, both, "the window once its slot is stable")
}
