package redisfilter_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// logMemoryEnv, set to a duration, runs TestLogMemoryFleet for that long.
const logMemoryEnv = "MITZBLOOM_LOG_MEMORY"

// memoryOf returns what MEMORY USAGE says key takes on the node that
// serves it, 0 for a key missing.
func memoryOf(ctx context.Context, t *testing.T, rdb redis.UniversalClient, key string) int64 {
	t.Helper()
	n, err := rdb.MemoryUsage(ctx, key).Result()
	if err == redis.Nil {
		return 0
	}
	require.NoError(t, err, key)
	return n
}

// keyMemory is what a filter's keys take in Redis's memory: its bitmaps,
// its change logs, and its other keys (config and hold).
type keyMemory struct {
	bitmaps, logs, others int64
	// worst is the log's share of its bitmap's memory in the shard where
	// it is largest.
	worst float64
}

func memoryOfFilter(ctx context.Context, t *testing.T, rdb redis.UniversalClient, f *redisfilter.Filter[string]) keyMemory {
	t.Helper()
	var m keyMemory
	for _, key := range f.Keys() {
		bitmap, log := memoryOf(ctx, t, rdb, key), memoryOf(ctx, t, rdb, key+":changes")
		m.bitmaps += bitmap
		m.logs += log
		m.others += memoryOf(ctx, t, rdb, key+":config") + memoryOf(ctx, t, rdb, key+":hold")
		m.worst = max(m.worst, float64(log)/float64(bitmap))
	}
	return m
}

func (m keyMemory) String() string {
	return fmt.Sprintf("bitmaps %d bytes, logs %d (%.2f of the bitmaps; %.2f of its bitmap in the shard where a log takes most), config and hold keys %d",
		m.bitmaps, m.logs, float64(m.logs)/float64(m.bitmaps), m.worst, m.others)
}

// TestLogMemory puts values into filters of shards of several sizes until
// every log was cut many times: no shard's log takes more of Redis's
// memory than its bitmap, and, for shards of 64 KiB or more, all the keys
// beyond the bitmaps take less than the bitmaps. Then it puts the same
// values again, by every way of putting, and merges a filter of them: a
// put that changes no bit appends nothing.
func TestLogMemory(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		for _, c := range []struct {
			n          int64
			shardBytes int64
		}{
			{1_000, 0},            // 1,200 bytes
			{300_000, 4 << 10},    // 88 shards of 4 KiB
			{300_000, shardBytes}, // 6 shards of 64 KiB
			{1_000_000, 0},        // 1.2 MB in one string
		} {
			t.Run(fmt.Sprintf("n=%d/shard=%d", c.n, c.shardBytes), func(t *testing.T) {
				var opts []redisfilter.Option
				if c.shardBytes != 0 {
					opts = append(opts, redisfilter.WithShardBytes(c.shardBytes))
				}
				name := fmt.Sprintf("%s-%d-%d", filterName(t), c.n, c.shardBytes)
				f, err := redisfilter.Open(ctx, rdb, name, funnel.String, c.n, 0.01, opts...)
				require.NoError(t, err)
				t.Cleanup(func() { f.Delete(context.Background()) })
				h, err := redisfilter.NewHybrid(ctx, f)
				require.NoError(t, err)
				r := rand.New(rand.NewPCG(uint64(c.n), 97))
				// Enough bits to cut each log (a quarter of its shard's
				// bytes, in records of 4 bytes, here) several times: 3
				// logs' worth, in values of 7 bits, the last ones put one
				// by one.
				values := randomStrings(r, int(max(1000, f.BitSize()/8*3/28)))
				require.NoError(t, f.PutMany(ctx, values[:len(values)-200]))
				for _, v := range values[len(values)-200:] {
					_, err := f.Put(ctx, v)
					require.NoError(t, err)
				}
				m := memoryOfFilter(ctx, t, rdb, f)
				t.Log(m)
				assert.LessOrEqual(t, m.worst, 1.0, "a shard's log takes more memory than its bitmap")
				if f.BitSize()/8/int64(len(f.Keys())) >= 64<<10 {
					assert.Less(t, m.logs+m.others, m.bitmaps, "the keys beyond the bitmaps take more memory than the bitmaps")
				}

				lengths := func() []int64 {
					var ls []int64
					for _, key := range f.Keys() {
						ls = append(ls, rdb.StrLen(ctx, key+":changes").Val())
					}
					return ls
				}
				before := lengths()
				again := values[len(values)-min(len(values), 1000):]
				require.NoError(t, f.PutMany(ctx, again))
				for _, v := range again[:50] {
					changed, err := f.Put(ctx, v)
					require.NoError(t, err)
					assert.False(t, changed)
				}
				require.NoError(t, f.Merge(ctx, mustLocal(t, c.n, again...)))
				// A Hybrid that has not read them pushes them.
				h.PutMany(again)
				require.NoError(t, h.Sync(ctx))
				assert.Equal(t, len(again), h.Stats().Last.Pushed)
				assert.Equal(t, before, lengths(), "puts that changed no bit appended to the logs")
			})
		}
	})
}

// TestLogMemoryFleet measures what the change logs take in Redis's memory
// against the filter's bitmaps after a steady fleet ran for the duration
// that MITZBLOOM_LOG_MEMORY names, on the shared cluster: 8 Hybrids, each
// putting 100 values every 100 ms (a tenth of them new, the others put
// before, by anyone) and syncing every 500 ms, and 2 processes putting
// through Filters, with PutMany of 100 values every 100 ms and a Put every
// 10 ms, alike. It runs once with default options (a filter of 10 million
// values, 11 MiB in one string) and once with shards of 64 KiB (a filter
// of 300,000 values, in 6). The figures go to the log; the test fails if a
// shard's log takes more memory than its bitmap.
//
//	MITZBLOOM_LOG_MEMORY=5m go test -run TestLogMemoryFleet -v -timeout 30m ./redisfilter/
func TestLogMemoryFleet(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv(logMemoryEnv))
	if err != nil {
		t.Skipf("set %s to a duration to run it", logMemoryEnv)
	}
	rdb := sharedCluster(t)
	for _, c := range []struct {
		name string
		n    int64
		opts []redisfilter.Option
	}{
		{"default", 10_000_000, nil},
		{"64KiB-shards", 300_000, []redisfilter.Option{redisfilter.WithShardBytes(shardBytes)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			name := filterName(t)
			open := func() *redisfilter.Filter[string] {
				f, err := redisfilter.Open(ctx, rdb, name, funnel.String, c.n, 0.01, c.opts...)
				require.NoError(t, err)
				return f
			}
			f := open()
			t.Cleanup(func() { f.Delete(context.Background()) })
			var (
				mu     sync.Mutex
				seen   []string // values put so far, for others to put again
				next   int64
				puts   int64
				failed int64
			)
			batch := func(r *rand.Rand, size int) []string {
				mu.Lock()
				defer mu.Unlock()
				vs := make([]string, size)
				for i := range vs {
					if i%10 == 0 || len(seen) == 0 {
						next++
						vs[i] = "v" + strconv.FormatInt(next, 10)
						seen = append(seen, vs[i])
					} else {
						vs[i] = seen[r.IntN(len(seen))]
					}
				}
				puts += int64(size)
				return vs
			}
			fail := func(err error) {
				if err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			every := func(period time.Duration, work func()) {
				wg.Go(func() {
					tick := time.NewTicker(period)
					defer tick.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
							work()
						}
					}
				})
			}
			for i := range 8 {
				h, err := redisfilter.NewHybrid(ctx, open())
				require.NoError(t, err)
				r := rand.New(rand.NewPCG(uint64(i), 98))
				every(100*time.Millisecond, func() { h.PutMany(batch(r, 100)) })
				every(500*time.Millisecond, func() {
					sctx, cancel := context.WithTimeout(ctx, time.Second)
					fail(h.Sync(sctx))
					cancel()
				})
			}
			for i := range 2 {
				g := open()
				r := rand.New(rand.NewPCG(uint64(i), 99))
				every(100*time.Millisecond, func() { fail(g.PutMany(ctx, batch(r, 100))) })
				every(10*time.Millisecond, func() {
					_, err := g.Put(ctx, batch(r, 1)[0])
					fail(err)
				})
			}
			// The load runs for d: a duration is what the test measures
			// after, not a wait for an event.
			time.Sleep(d)
			close(stop)
			wg.Wait()
			m := memoryOfFilter(ctx, t, rdb, f)
			t.Logf("after %v: %d values put (%d new), %d calls failed; %v", d, puts, next, failed, m)
			assert.LessOrEqual(t, m.worst, 1.0, "a shard's log takes more memory than its bitmap")
		})
	}
}
