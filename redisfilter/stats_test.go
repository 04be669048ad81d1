package redisfilter_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// TestStats requires a Filter's ExpectedFPP and ApproximateElementCount,
// counted in Redis, to equal to the last bit those of its Snapshot, empty,
// partly full, full and overfull, in one string, in shards, and in a
// string of several chunks.
func TestStats(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		r := rand.New(rand.NewPCG(3, 4))
		for _, c := range []struct {
			name string
			n    int64
			puts []int // put so many more before each check
			opts []redisfilter.Option
		}{
			// Empty, partly full, full and overfull.
			{"one string", 5000, []int{0, 1, 2500, 2500, 5000}, nil},
			{"shards", 50_000, []int{0, 1, 25_000, 25_000, 50_000}, []redisfilter.Option{redisfilter.WithShardBytes(8 << 10)}},
			// 1.2 MB: two chunks of BITCOUNT.
			{"chunks", 1_000_000, []int{0, 1, 20_000}, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, c.n, 0.01, c.opts...)
				require.NoError(t, err)
				t.Cleanup(func() { f.Delete(context.Background()) })
				put := 0
				for _, more := range c.puts {
					require.NoError(t, f.PutMany(ctx, randomStrings(r, more)))
					put += more
					checkStats(t, f, fmt.Sprintf("%d put", put))
				}
				if single, ok := rdb.(*redis.Client); ok && c.n == 1_000_000 {
					// From counts, not from the bits: the server sends a
					// few hundred bytes, where a Snapshot moves 1.2 MB.
					sent := func() int64 {
						info, err := single.InfoMap(ctx, "stats").Result()
						require.NoError(t, err)
						n, err := strconv.ParseInt(info["Stats"]["total_net_output_bytes"], 10, 64)
						require.NoError(t, err)
						return n
					}
					before := sent()
					_, err := f.ExpectedFPP(ctx)
					require.NoError(t, err)
					moved := sent() - before
					t.Logf("ExpectedFPP of %d bytes: the server sent %d bytes", f.BitSize()/8, moved)
					assert.Less(t, moved, int64(100_000))
				}
			})
		}
	})
}

func checkStats(t *testing.T, f *redisfilter.Filter[string], what string) {
	t.Helper()
	ctx := testContext(t)
	snap, err := f.Snapshot(ctx)
	require.NoError(t, err)
	fpp, err := f.ExpectedFPP(ctx)
	require.NoError(t, err)
	count, err := f.ApproximateElementCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, math.Float64bits(snap.ExpectedFPP()), math.Float64bits(fpp), "%s: expected FPP %v, Snapshot's %v", what, fpp, snap.ExpectedFPP())
	assert.Equal(t, snap.ApproximateElementCount(), count, "%s: approximate element count", what)
}

// TestStatsSaturated fills a filter of 64 bits: every bit set, an FPP of 1
// and a count of math.MaxInt64, as bloom's.
func TestStatsSaturated(t *testing.T) {
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, sharedClient(t), filterName(t), funnel.Int64, 1, 0.5)
	require.NoError(t, err)
	t.Cleanup(func() { f.Delete(context.Background()) })
	values := make([]int64, 384)
	for i := range values {
		values[i] = int64(i)
	}
	require.NoError(t, f.PutMany(ctx, values))
	fpp, err := f.ExpectedFPP(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1.0, fpp)
	count, err := f.ApproximateElementCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(math.MaxInt64), count)
}

// fixedClock is a bloom.Clock whose time moves when the test sets it.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fixedClock) AfterFunc(time.Duration, func()) {} // a Windowed never calls it

func (c *fixedClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// TestWindowStats puts values in several generations of a window and
// requires its ExpectedFPP and ApproximateElementCount to be those of the
// Snapshots of the generations MightContain looks in, combined as
// documented, to the last bit; and a generation lost to be an error
// wrapping ErrLost.
func TestWindowStats(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		r := rand.New(rand.NewPCG(5, 6))
		const gens = 3
		start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		clk := &fixedClock{now: start}
		w, err := redisfilter.OpenWindowed(ctx, rdb, filterName(t), funnel.String, 20_000, 0.01, time.Hour, gens,
			redisfilter.WithShardBytes(8<<10), redisfilter.WithClock(clk))
		require.NoError(t, err)
		t.Cleanup(func() { w.Delete(context.Background()) })

		check := func(what string) {
			t.Helper()
			now := w.Generation(clk.Now())
			var wantFPP float64
			var wantCount, wantBits int64
			// MightContain looks in the last gens generations and the next.
			for g := now - gens + 1; g <= now+1; g++ {
				snap, err := w.Snapshot(ctx, g)
				require.NoError(t, err)
				q := snap.ExpectedFPP()
				wantFPP = wantFPP + q - wantFPP*q
				wantCount += snap.ApproximateElementCount()
				wantBits += snap.BitCount()
			}
			bits, err := w.BitCount(ctx)
			require.NoError(t, err)
			assert.Equal(t, wantBits, bits, "%s: bits set", what)
			fpp, err := w.ExpectedFPP(ctx)
			require.NoError(t, err)
			count, err := w.ApproximateElementCount(ctx)
			require.NoError(t, err)
			assert.Equal(t, math.Float64bits(wantFPP), math.Float64bits(fpp), "%s: expected FPP %v, the Snapshots' %v", what, fpp, wantFPP)
			assert.Equal(t, wantCount, count, "%s: approximate element count", what)
		}
		check("empty")
		for hour := range 5 {
			clk.set(start.Add(time.Duration(hour) * time.Hour))
			require.NoError(t, w.PutMany(ctx, randomStrings(r, 3000*(hour+1))))
			check(fmt.Sprintf("hour %d", hour))
		}
		// A value put in two generations counts in both.
		_, err = w.Put(ctx, "twice")
		require.NoError(t, err)
		clk.set(clk.Now().Add(time.Hour))
		before, err := w.ApproximateElementCount(ctx)
		require.NoError(t, err)
		_, err = w.Put(ctx, "twice")
		require.NoError(t, err)
		after, err := w.ApproximateElementCount(ctx)
		require.NoError(t, err)
		assert.Equal(t, before+1, after)
		check("twice")

		// A generation the window reads, lost before its expiry.
		keys := w.GenerationKeys(w.Generation(clk.Now()))
		require.NoError(t, rdb.Del(ctx, keys[len(keys)-1]).Err())
		_, err = w.ExpectedFPP(ctx)
		assert.ErrorIs(t, err, redisfilter.ErrLost)
		_, err = w.ApproximateElementCount(ctx)
		assert.ErrorIs(t, err, redisfilter.ErrLost)
		_, err = w.BitCount(ctx)
		assert.ErrorIs(t, err, redisfilter.ErrLost)
	})
}

// TestStatsLost requires the statistics of a deleted filter to be errors
// wrapping ErrLost, not those of an empty filter.
func TestStatsLost(t *testing.T) {
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, sharedClient(t), filterName(t), funnel.String, 1000, 0.01)
	require.NoError(t, err)
	require.NoError(t, f.Delete(ctx))
	_, err = f.ExpectedFPP(ctx)
	assert.ErrorIs(t, err, redisfilter.ErrLost)
	_, err = f.ApproximateElementCount(ctx)
	assert.ErrorIs(t, err, redisfilter.ErrLost)
}

var _ bloom.Clock = (*fixedClock)(nil)
