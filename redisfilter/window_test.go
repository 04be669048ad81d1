package redisfilter_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWindowGenerations walks a window of 3 one-hour generations through
// time on a settable clock. The clock starts at the real time, because
// Redis expires the bitmaps by its own.
func TestWindowGenerations(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		name := filterName(t)
		start := time.Now().Truncate(time.Hour).Add(time.Hour + 10*time.Minute)
		clk := bloomtest.NewClock(start)
		w, err := redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 1000, 1e-6, time.Hour, 3, redisfilter.WithClock(clk))
		require.NoError(t, err)
		gen := w.Generation(start)
		assert.Equal(t, start.Unix()/3600, gen)
		assert.Equal(t, "{"+name+"}:"+strconv.FormatInt(gen, 10), w.GenerationKeys(gen)[0])
		cfg, err := rdb.Get(ctx, w.ConfigKeys()[0]).Result()
		require.NoError(t, err)
		assert.Regexp(t, `^mitzbloom/redisfilter v1 bits=28800 k=20 strategy=MURMUR128_MITZ_64 funnel="funnel.String" window=1h0m0s generations=3 id=[0-9a-f]{16} n=1000 p=1e-06$`, cfg)
		n, err := rdb.Exists(ctx, w.GenerationKeys(gen)[0]).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "OpenWindowed created a bitmap")

		changed, err := w.Put(ctx, "a")
		require.NoError(t, err)
		assert.True(t, changed)
		// Created at full size, expiring one period after the last generation
		// that reads it ends.
		size, err := rdb.StrLen(ctx, w.GenerationKeys(gen)[0]).Result()
		require.NoError(t, err)
		assert.Equal(t, w.BitSize()/8, size)
		expireAt, err := rdb.PExpireTime(ctx, w.GenerationKeys(gen)[0]).Result()
		require.NoError(t, err)
		assert.Equal(t, time.Duration(gen+4)*time.Hour, expireAt)

		clk.Advance(time.Hour)
		require.NoError(t, w.PutMany(ctx, []string{"b", "c"}))
		clk.Advance(time.Hour)
		_, err = w.Put(ctx, "d")
		require.NoError(t, err)

		// Now in gen+2: gen, gen+1 and gen+2 are read.
		found, err := w.MightContainMany(ctx, nil, []string{"a", "b", "c", "d", "e"})
		require.NoError(t, err)
		assert.Equal(t, []bool{true, true, true, true, false}, found)

		clk.Advance(time.Hour) // gen+3: "a" is out of the window
		found, err = w.MightContainMany(ctx, nil, []string{"a", "b", "c", "d"})
		require.NoError(t, err)
		assert.Equal(t, []bool{false, true, true, true}, found)
		ok, err := w.MightContain(ctx, "a")
		require.NoError(t, err)
		assert.False(t, ok)

		clk.Advance(time.Hour) // gen+4: only "d" is left
		found, err = w.MightContainMany(ctx, nil, []string{"a", "b", "c", "d"})
		require.NoError(t, err)
		assert.Equal(t, []bool{false, false, false, true}, found)

		// Each generation is a Guava bit array of its own.
		local, err := bloom.New(funnel.String, 1000, 1e-6)
		require.NoError(t, err)
		local.Put("b")
		local.Put("c")
		snap, err := w.Snapshot(ctx, gen+1)
		require.NoError(t, err)
		assert.True(t, snap.Equal(local))
		empty, err := w.Snapshot(ctx, gen+4)
		require.NoError(t, err)
		assert.Zero(t, empty.BitCount(), "a generation without a bitmap reads as empty")
	})
}

// TestWindowFleet: replicas with their own clients and clocks put into the
// window at once and land in the same generation's key, which equals a
// local filter of all their keys.
func TestWindowFleet(t *testing.T) {
	const replicas, perReplica = 4, 500
	ctx := testContext(t)
	name := filterName(t)
	now := time.Now()
	all := randomStrings(rand.New(rand.NewPCG(19, 20)), replicas*perReplica)
	ws := make([]*redisfilter.Windowed[string], replicas)
	for i := range ws {
		clk := bloomtest.NewClock(now) // the same time, read separately by each
		var err error
		ws[i], err = redisfilter.OpenWindowed(ctx, sharedClient(t), name, funnel.String, replicas*perReplica, 0.01, 24*time.Hour, 2, redisfilter.WithClock(clk))
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, replicas)
	for i, w := range ws {
		wg.Go(func() {
			keys := all[i*perReplica : (i+1)*perReplica]
			for j := 0; j < len(keys); j += 100 {
				if err := w.PutMany(ctx, keys[j:j+100]); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	local, err := bloom.New(funnel.String, replicas*perReplica, 0.01)
	require.NoError(t, err)
	for _, v := range all {
		local.Put(v)
	}
	gen := ws[0].Generation(now)
	snap, err := ws[0].Snapshot(ctx, gen)
	require.NoError(t, err)
	assert.True(t, snap.Equal(local), "the generation differs from a local filter of all the keys")
	for i, w := range ws {
		found, err := w.MightContainMany(ctx, nil, all)
		require.NoError(t, err)
		assert.NotContains(t, found, false, "replica %d: false negatives", i)
	}
}

// TestWindowClockSkew: a replica whose clock is ahead puts into the next
// generation; one whose clock is behind still finds the value.
func TestWindowClockSkew(t *testing.T) {
	ctx := testContext(t)
	name := filterName(t)
	boundary := time.Now().Truncate(time.Hour).Add(time.Hour)
	ahead := bloomtest.NewClock(boundary.Add(time.Second))
	behind := bloomtest.NewClock(boundary.Add(-time.Second))
	open := func(clk bloom.Clock) *redisfilter.Windowed[string] {
		w, err := redisfilter.OpenWindowed(ctx, sharedClient(t), name, funnel.String, 100, 1e-6, time.Hour, 2, redisfilter.WithClock(clk))
		require.NoError(t, err)
		return w
	}
	a, b := open(ahead), open(behind)
	require.Equal(t, a.Generation(ahead.Now()), b.Generation(behind.Now())+1)
	_, err := a.Put(ctx, "x")
	require.NoError(t, err)
	ok, err := b.MightContain(ctx, "x")
	require.NoError(t, err)
	assert.True(t, ok, "a replica behind misses a put made in the next generation")
}

// TestWindowExpires lets Redis expire a short window's bitmap for real.
func TestWindowExpires(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	const period = 50 * time.Millisecond
	w, err := redisfilter.OpenWindowed(ctx, rdb, filterName(t), funnel.Int64, 100, 0.01, period, 1)
	require.NoError(t, err)
	// A Put that straddles the end of a generation leaves its bitmap
	// unknown: put again until one does not. Earlier bitmaps expire
	// earlier.
	var gen int64
	for attempt := 0; ; attempt++ {
		require.Less(t, attempt, 10, "no Put fit in a generation of %v", period)
		gen = w.Generation(time.Now())
		_, err = w.Put(ctx, 1)
		require.NoError(t, err)
		if gen == w.Generation(time.Now()) {
			break
		}
	}
	// The bitmap expires at the end of generation gen+2, by Redis's clock:
	// the time passing is what the test is about, not a wait for an event.
	time.Sleep(time.Until(time.UnixMilli((gen+2)*period.Milliseconds())) + 10*time.Millisecond)
	n, err := rdb.Exists(ctx, w.GenerationKeys(gen)[0]).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the bitmap outlived its expiry")
	ok, err := w.MightContain(ctx, 1)
	require.NoError(t, err)
	assert.False(t, ok)
}

// TestWindowWrongKeys: a generation key of another type is an error, never
// silently skipped, and windows check their config as filters do.
func TestWindowWrongKeys(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		name := filterName(t)
		clk := bloomtest.NewClock(time.Now())
		w, err := redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 100, 0.01, time.Hour, 2, redisfilter.WithClock(clk))
		require.NoError(t, err)
		gen := w.Generation(clk.Now())
		require.NoError(t, rdb.LPush(ctx, w.GenerationKeys(gen - 1)[0], "x").Err())
		t.Cleanup(func() { rdb.Del(context.Background(), w.GenerationKeys(gen - 1)[0]) })
		_, err = w.MightContain(ctx, "a")
		assert.ErrorIs(t, err, redisfilter.ErrNotFilter)
		require.NoError(t, rdb.Set(ctx, w.GenerationKeys(gen)[0], "short", time.Minute).Err())
		_, err = w.Put(ctx, "a")
		assert.ErrorIs(t, err, redisfilter.ErrNotFilter)

		_, err = redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 100, 0.01, time.Minute, 2)
		assert.ErrorIs(t, err, redisfilter.ErrMismatch, "another period")
		_, err = redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 100, 0.01, time.Hour, 3)
		assert.ErrorIs(t, err, redisfilter.ErrMismatch, "another number of generations")
		_, err = redisfilter.Open(ctx, rdb, name, funnel.String, 100, 0.01)
		assert.ErrorIs(t, err, redisfilter.ErrMismatch, "a plain filter of a window's name")
	})
}

// TestWindowDelete deletes a window with two generations, in one string and
// in shards: no key of it is left, and calls then report ErrLost.
func TestWindowDelete(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		for _, shards := range []int64{1, 3} {
			t.Run(strconv.FormatInt(shards, 10), func(t *testing.T) {
				ctx := testContext(t)
				name := filterName(t)
				clock := bloomtest.NewClock(time.Now())
				opts := []redisfilter.Option{redisfilter.WithClock(clock)}
				if shards > 1 {
					opts = append(opts, redisfilter.WithShardBytes(4096))
				}
				w, err := redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 10_000, 0.01, time.Minute, 2, opts...)
				require.NoError(t, err)
				require.Len(t, w.ConfigKeys(), int(shards))
				values := randomStrings(rand.New(rand.NewPCG(41, 42)), 1000)
				require.NoError(t, w.PutMany(ctx, values[:500]))
				clock.Advance(time.Minute)
				require.NoError(t, w.PutMany(ctx, values[500:]))
				pattern := "{" + name + "*"
				require.NotEmpty(t, keysMatching(t, rdb, pattern))

				require.NoError(t, w.Delete(ctx))
				assert.Empty(t, keysMatching(t, rdb, pattern), "keys left after Delete")
				_, err = w.MightContainMany(ctx, nil, values)
				assert.ErrorIs(t, err, redisfilter.ErrLost, "MightContainMany after Delete")
				assert.ErrorIs(t, w.PutMany(ctx, values), redisfilter.ErrLost, "PutMany after Delete")
				assert.Empty(t, keysMatching(t, rdb, pattern), "a Put after Delete left a key")
			})
		}
	})
}
