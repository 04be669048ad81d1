package redisfilter_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/mitzbloom/mitzbloom/strategy"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// The benchmarks run against the tests' Redis (see server_test.go): one that
// TestMain starts on a loopback port, or the one MITZBLOOM_REDIS_ADDR names.
// Each reports keys/s, the number to compare between single-key calls and
// batches of 256, which must move at least 10 times as many keys per second;
// BenchmarkBatchSpeedup measures that ratio directly.

const benchBatch = 256

// benchFilter returns a filter for a million strings at p = 0.01 (1.2 MB,
// k = 7) holding benchKeys, and benchKeys.
func benchFilter(b *testing.B) (*redisfilter.Filter[string], []string) {
	rdb := sharedClient(b)
	ctx := context.Background()
	f, err := redisfilter.Open(ctx, rdb, filterName(b), funnel.String, 1_000_000, 0.01)
	require.NoError(b, err)
	b.Cleanup(func() { f.Delete(context.Background()) })
	keys := make([]string, 64*benchBatch)
	r := rand.New(rand.NewPCG(9, 10))
	for i := range keys {
		keys[i] = fmt.Sprintf("user:%d", r.Uint64())
	}
	require.NoError(b, f.PutMany(ctx, keys[:len(keys)/2]))
	return f, keys
}

func reportKeys(b *testing.B, keys int) {
	b.ReportMetric(float64(keys)/b.Elapsed().Seconds(), "keys/s")
}

func BenchmarkPut(b *testing.B) {
	b.Run("single", func(b *testing.B) {
		f, keys := benchFilter(b)
		ctx := context.Background()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := f.Put(ctx, keys[i%len(keys)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
		reportKeys(b, i)
	})
	b.Run(fmt.Sprintf("batch=%d", benchBatch), func(b *testing.B) {
		f, keys := benchFilter(b)
		ctx := context.Background()
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			start := (n * benchBatch) % len(keys)
			if err := f.PutMany(ctx, keys[start:start+benchBatch]); err != nil {
				b.Fatal(err)
			}
			n++
		}
		reportKeys(b, n*benchBatch)
	})
}

func BenchmarkMightContain(b *testing.B) {
	b.Run("single", func(b *testing.B) {
		f, keys := benchFilter(b)
		ctx := context.Background()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := f.MightContain(ctx, keys[i%len(keys)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
		reportKeys(b, i)
	})
	b.Run(fmt.Sprintf("batch=%d", benchBatch), func(b *testing.B) {
		f, keys := benchFilter(b)
		ctx := context.Background()
		b.ReportAllocs()
		dst := make([]bool, 0, benchBatch)
		n := 0
		for b.Loop() {
			start := (n * benchBatch) % len(keys)
			var err error
			if dst, err = f.MightContainMany(ctx, dst[:0], keys[start:start+benchBatch]); err != nil {
				b.Fatal(err)
			}
			n++
		}
		reportKeys(b, n*benchBatch)
	})
}

// BenchmarkHybrid measures the local side of a Hybrid, which is what a
// replica pays per key between syncs.
func BenchmarkHybrid(b *testing.B) {
	f, keys := benchFilter(b)
	h, err := redisfilter.NewHybrid(context.Background(), f)
	require.NoError(b, err)
	b.Run("Put", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(len(keys))
			for pb.Next() {
				h.Put(keys[i%len(keys)])
				i++
			}
		})
		reportKeys(b, b.N)
	})
	b.Run("MightContain", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(len(keys))
			for pb.Next() {
				h.MightContain(keys[i%len(keys)])
				i++
			}
		})
		reportKeys(b, b.N)
	})
}

// BenchmarkBatchSpeedup alternates 256 single-key calls with one batch of the
// same 256 keys and reports how many times faster the batch moves them
// ("speedup"). Alternating makes both see the same machine, which matters on
// a shared one.
func BenchmarkBatchSpeedup(b *testing.B) {
	ops := []struct {
		name   string
		single func(context.Context, *redisfilter.Filter[string], string) error
		batch  func(context.Context, *redisfilter.Filter[string], []string) error
	}{
		{"Put",
			func(ctx context.Context, f *redisfilter.Filter[string], k string) error {
				_, err := f.Put(ctx, k)
				return err
			},
			func(ctx context.Context, f *redisfilter.Filter[string], ks []string) error {
				return f.PutMany(ctx, ks)
			}},
		{"MightContain",
			func(ctx context.Context, f *redisfilter.Filter[string], k string) error {
				_, err := f.MightContain(ctx, k)
				return err
			},
			func(ctx context.Context, f *redisfilter.Filter[string], ks []string) error {
				_, err := f.MightContainMany(ctx, nil, ks)
				return err
			}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			f, keys := benchFilter(b)
			ctx := context.Background()
			var single, batch time.Duration
			n := 0
			for b.Loop() {
				start := (n * benchBatch) % len(keys)
				ks := keys[start : start+benchBatch]
				t0 := time.Now()
				for _, k := range ks {
					if err := op.single(ctx, f, k); err != nil {
						b.Fatal(err)
					}
				}
				t1 := time.Now()
				if err := op.batch(ctx, f, ks); err != nil {
					b.Fatal(err)
				}
				single += t1.Sub(t0)
				batch += time.Since(t1)
				n++
			}
			b.ReportMetric(float64(n*benchBatch)/single.Seconds(), "single-keys/s")
			b.ReportMetric(float64(n*benchBatch)/batch.Seconds(), "batch-keys/s")
			b.ReportMetric(single.Seconds()/batch.Seconds(), "speedup")
		})
	}
}

// BenchmarkVsRawBitfield compares batches of 256 keys through the filter
// with raw pipelined BITFIELD commands that set or get the same bit offsets
// without any check, alternating the two so that both see the same machine.
// It reports each side's keys/s, their ratio ("vs-raw"), and the server time
// per key of each side ("server-ns/key", the main thread's CPU time from
// INFO cpu), and that of the commands the filter sent, as INFO commandstats
// counts it ("commandstats-ns/key").
func BenchmarkVsRawBitfield(b *testing.B) {
	for _, put := range []bool{true, false} {
		name := "MightContainMany"
		if put {
			name = "PutMany"
		}
		b.Run(name, func(b *testing.B) {
			f, keys := benchFilter(b)
			rdb := sharedClient(b)
			ctx := context.Background()
			raw := rawBitfield(f, put)
			var filter, direct time.Duration
			var filterUsec, directUsec, commandsUsec float64
			dst := make([]bool, 0, benchBatch)
			n := 0
			for b.Loop() {
				ks := keys[(n*benchBatch)%len(keys):][:benchBatch]
				u0 := serverUsec(b, rdb)
				rdb.ConfigResetStat(ctx)
				t0 := time.Now()
				var err error
				if put {
					err = f.PutMany(ctx, ks)
				} else {
					dst, err = f.MightContainMany(ctx, dst[:0], ks)
				}
				if err != nil {
					b.Fatal(err)
				}
				filter += time.Since(t0)
				filterUsec += serverUsec(b, rdb) - u0
				commandsUsec += commandUsec(b, rdb, topLevel...)
				u1 := serverUsec(b, rdb)
				t1 := time.Now()
				if _, err := rdb.Do(ctx, raw(ks)...).Result(); err != nil {
					b.Fatal(err)
				}
				direct += time.Since(t1)
				directUsec += serverUsec(b, rdb) - u1
				n++
			}
			keysMoved := float64(n * benchBatch)
			b.ReportMetric(keysMoved/filter.Seconds(), "keys/s")
			b.ReportMetric(keysMoved/direct.Seconds(), "raw-keys/s")
			b.ReportMetric(direct.Seconds()/filter.Seconds(), "vs-raw")
			b.ReportMetric(filterUsec*1000/keysMoved, "server-ns/key")
			b.ReportMetric(directUsec*1000/keysMoved, "raw-server-ns/key")
			b.ReportMetric(commandsUsec*1000/keysMoved, "commandstats-ns/key")
		})
	}
}

// rawBitfield returns a function that makes one BITFIELD command setting or
// getting the bits of keys in f's bitmap, as the filter would.
func rawBitfield(f *redisfilter.Filter[string], set bool) func(keys []string) []any {
	key := f.Keys()[0]
	var idx []int64
	return func(keys []string) []any {
		args := []any{"BITFIELD", key}
		if !set {
			args[0] = "BITFIELD_RO"
		}
		for _, k := range keys {
			h1, h2 := strategy.Sum128(funnel.String, k)
			idx = f.Strategy().AppendIndexes(idx[:0], h1, h2, f.NumHashFunctions(), f.BitSize())
			for _, i := range idx {
				if set {
					args = append(args, "SET", "u1", i^63, 1)
				} else {
					args = append(args, "GET", "u1", i^63)
				}
			}
		}
		return args
	}
}

// serverUsec returns the CPU time, in microseconds, of the server's main
// thread, which runs every command: differences of it are the server time
// of what ran in between, parsing and replies included, each command once
// (INFO commandstats counts the commands a script or a transaction runs
// both by themselves and within it).
func serverUsec(b *testing.B, rdb *redis.Client) float64 {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for line := range strings.Lines(info) {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_sys_main_thread" || name == "used_cpu_user_main_thread") {
			sec, _ := strconv.ParseFloat(v, 64)
			total += sec * 1e6
		}
	}
	return total
}

// commandUsec returns the microseconds INFO commandstats counts for the
// commands names since the stats were last reset.
func commandUsec(b *testing.B, rdb *redis.Client, names ...string) float64 {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for line := range strings.Lines(info) {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !slices.Contains(names, strings.TrimPrefix(name, "cmdstat_")) {
			continue
		}
		for field := range strings.SplitSeq(stats, ",") {
			if v, ok := strings.CutPrefix(field, "usec="); ok {
				usec, _ := strconv.ParseFloat(v, 64)
				total += usec
			}
		}
	}
	return total
}

// topLevel are the commands a batch sends itself: a Put's transaction,
// whose time includes the scripts and the BITFIELD it runs, and a read's
// checks and BITFIELD_RO.
var topLevel = []string{"exec", "get", "strlen", "bitfield_ro", "zscore", "evalsha", "evalsha_ro"}

// BenchmarkClusterSharded compares a filter of 19 shards with one of one
// string on the CI cluster, 4 goroutines each running batches of 256 keys,
// alternating the two, and reports the sharded filter's keys/s over the
// unsharded one's ("speedup").
func BenchmarkClusterSharded(b *testing.B) {
	for _, put := range []bool{true, false} {
		name := "MightContainMany"
		if put {
			name = "PutMany"
		}
		b.Run(name, func(b *testing.B) {
			rdb := sharedCluster(b)
			ctx := context.Background()
			open := func(opts ...redisfilter.Option) *redisfilter.Filter[string] {
				f, err := redisfilter.Open(ctx, rdb, filterName(b)+fmt.Sprint(len(opts)), funnel.String, 1_000_000, 0.01, opts...)
				require.NoError(b, err)
				b.Cleanup(func() { f.Delete(context.Background()) })
				return f
			}
			one, sharded := open(), open(redisfilter.WithShardBytes(64<<10))
			keys := make([]string, 64*benchBatch)
			r := rand.New(rand.NewPCG(9, 10))
			for i := range keys {
				keys[i] = fmt.Sprintf("user:%d", r.Uint64())
			}
			run := func(f *redisfilter.Filter[string]) time.Duration {
				t0 := time.Now()
				var wg sync.WaitGroup
				for g := range 4 {
					wg.Go(func() {
						for i := g; i < 64; i += 4 {
							ks := keys[i*benchBatch:][:benchBatch]
							var err error
							if put {
								err = f.PutMany(ctx, ks)
							} else {
								_, err = f.MightContainMany(ctx, nil, ks)
							}
							if err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				return time.Since(t0)
			}
			var tOne, tSharded time.Duration
			for b.Loop() {
				tOne += run(one)
				tSharded += run(sharded)
			}
			b.ReportMetric(tOne.Seconds()/tSharded.Seconds(), "speedup")
			b.ReportMetric(float64(b.N*len(keys))/tSharded.Seconds(), "sharded-keys/s")
			b.ReportMetric(float64(b.N*len(keys))/tOne.Seconds(), "one-keys/s")
		})
	}
}
