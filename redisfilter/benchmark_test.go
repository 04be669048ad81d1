package redisfilter_test

import (
	"context"
	"fmt"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// The benchmarks run against the tests' Redis (see server_test.go): the one
// MITZBLOOM_REDIS_ADDR names, or one the first of them starts.
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
// with two other ways of setting or getting the same bit offsets, taking
// turns so that all three see the same machine: raw pipelined BITFIELD
// commands without any check ("raw"), and the scripts of the releases before
// sharding, which check the config and then make one redis.call per bit
// ("lua"). For each side it reports keys/s, and the server time per key
// twice: as INFO commandstats counts the commands the side sent
// ("commandstats-ns/key"), and as the main thread's CPU time from INFO cpu,
// which also counts parsing the commands and writing the replies
// ("cpu-ns/key"). "vs-raw" is the filter's keys/s over raw's, and
// "vs-lua-commandstats" its commandstats time over lua's.
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
			raw, lua := rawBitfield(f, put), luaBits(b, rdb, f, put)
			type side struct {
				run              func(ks []string) error
				commands         []string
				elapsed          time.Duration
				statsUsec, cpuUs float64
			}
			dst := make([]bool, 0, benchBatch)
			sides := []*side{{
				run: func(ks []string) (err error) {
					if put {
						return f.PutMany(ctx, ks)
					}
					dst, err = f.MightContainMany(ctx, dst[:0], ks)
					return err
				},
				commands: topLevel,
			}, {
				run:      func(ks []string) error { return rdb.Do(ctx, raw(ks)...).Err() },
				commands: []string{"bitfield", "bitfield_ro"},
			}, {
				run:      func(ks []string) error { return rdb.Do(ctx, lua(ks)...).Err() },
				commands: []string{"evalsha"},
			}}
			// Puts are of values not in the filter yet, each side its own,
			// as a Put is used; reads cycle through keys, half of which the
			// filter holds.
			r := rand.New(rand.NewPCG(11, 12))
			fresh := make([]string, benchBatch)
			n := 0
			for b.Loop() {
				ks := keys[(n*benchBatch)%len(keys):][:benchBatch]
				for _, s := range sides {
					if put {
						for i := range fresh {
							fresh[i] = fmt.Sprintf("new:%d", r.Uint64())
						}
						ks = fresh
					}
					rdb.ConfigResetStat(ctx)
					cpu := serverUsec(b, rdb)
					t := time.Now()
					if err := s.run(ks); err != nil {
						b.Fatal(err)
					}
					s.elapsed += time.Since(t)
					s.cpuUs += serverUsec(b, rdb) - cpu
					s.statsUsec += commandUsec(b, rdb, s.commands...)
				}
				n++
			}
			keysMoved := float64(n * benchBatch)
			for i, prefix := range []string{"", "raw-", "lua-"} {
				s := sides[i]
				b.ReportMetric(keysMoved/s.elapsed.Seconds(), prefix+"keys/s")
				b.ReportMetric(s.statsUsec*1000/keysMoved, prefix+"commandstats-ns/key")
				b.ReportMetric(s.cpuUs*1000/keysMoved, prefix+"cpu-ns/key")
			}
			b.ReportMetric(sides[1].elapsed.Seconds()/sides[0].elapsed.Seconds(), "vs-raw")
			b.ReportMetric(sides[0].statsUsec/sides[2].statsUsec, "vs-lua-commandstats")
		})
	}
}

// rawBitfield returns a function that makes one BITFIELD command setting or
// getting the bits of keys in f's bitmap, as the filter would.
func rawBitfield(f *redisfilter.Filter[string], set bool) func(keys []string) []any {
	key := f.Keys()[0]
	return func(keys []string) []any {
		args := []any{"BITFIELD", key}
		if !set {
			args[0] = "BITFIELD_RO"
		}
		for _, i := range redisOffsets(f, keys) {
			if set {
				args = append(args, "SET", "u1", i, 1)
			} else {
				args = append(args, "GET", "u1", i)
			}
		}
		return args
	}
}

// redisOffsets returns the Redis bit offsets of the bits of keys in f's
// unsharded bitmap, k per key: Guava's bit i of a word is Redis's bit 63-i.
func redisOffsets(f *redisfilter.Filter[string], keys []string) []int64 {
	var idx []int64
	for _, k := range keys {
		h1, h2 := raw.Sum128(funnel.String, k)
		idx = raw.AppendIndexes(idx, f.Strategy(), h1, h2, f.NumHashFunctions(), f.BitSize())
	}
	for j := range idx {
		idx[j] ^= 63
	}
	return idx
}

// luaBits returns a function that makes the EVALSHA command with which the
// releases before sharding set or tested the bits of keys in f's bitmap: a
// script that checks the config and the bitmap's length and then calls
// GETBIT (and SETBIT for a bit not set yet) once per bit, stopping a test at
// a value's first bit not set.
func luaBits(b *testing.B, rdb *redis.Client, f *redisfilter.Filter[string], set bool) func(keys []string) []any {
	cfgKey, key := f.ConfigKeys()[0], f.Keys()[0]
	cfg, err := rdb.Get(context.Background(), cfgKey).Result()
	require.NoError(b, err)
	script := luaContains
	if set {
		script = luaPut
	}
	sha, err := rdb.ScriptLoad(context.Background(), script).Result()
	require.NoError(b, err)
	k := int(f.NumHashFunctions())
	return func(keys []string) []any {
		args := []any{"EVALSHA", sha, 2, cfgKey, key, cfg, f.BitSize() / 8, k}
		for _, i := range redisOffsets(f, keys) {
			args = append(args, i)
		}
		return args
	}
}

// luaCheck, luaPut and luaContains are the scripts of the releases before
// sharding, for a filter that is not windowed.
const luaCheck = `
local cfg = redis.call('GET', KEYS[1])
if cfg ~= ARGV[1] then return redis.error_reply('MITZBLOOM_MISMATCH') end
if redis.call('STRLEN', KEYS[2]) ~= tonumber(ARGV[2]) then return redis.error_reply('MITZBLOOM_LOST') end
local k = tonumber(ARGV[3])
local out = {}
`

const luaPut = "#!lua\n" + luaCheck + `
for v = 1, (#ARGV - 3) / k do
  local changed = '0'
  for j = 3 + (v - 1) * k + 1, 3 + v * k do
    if redis.call('GETBIT', KEYS[2], ARGV[j]) == 0 then
      redis.call('SETBIT', KEYS[2], ARGV[j], '1')
      changed = '1'
    end
  end
  out[v] = changed
end
return table.concat(out)
`

const luaContains = "#!lua flags=no-writes\n" + luaCheck + `
for v = 1, (#ARGV - 3) / k do
  local found = '1'
  for j = 3 + (v - 1) * k + 1, 3 + v * k do
    if redis.call('GETBIT', KEYS[2], ARGV[j]) == 0 then
      found = '0'
      break
    end
  end
  out[v] = found
end
return table.concat(out)
`

// serverUsec returns the CPU time, in microseconds, of the server's main
// thread, which runs every command: differences of it are the server time
// of what ran in between, parsing and replies included, each command once
// (INFO commandstats counts the commands a script or a transaction runs
// both by themselves and within it).
func serverUsec(b *testing.B, rdb *redis.Client) float64 {
	usec, err := mainThreadUsec(context.Background(), rdb)
	if err != nil {
		b.Fatal(err)
	}
	return usec
}

func mainThreadUsec(ctx context.Context, rdb *redis.Client) (float64, error) {
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	var total float64
	for line := range strings.Lines(info) {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_sys_main_thread" || name == "used_cpu_user_main_thread") {
			sec, _ := strconv.ParseFloat(v, 64)
			total += sec * 1e6
		}
	}
	return total, nil
}

// mastersUsec returns serverUsec of every master of rdb, by address.
func mastersUsec(b *testing.B, rdb *redis.ClusterClient) map[string]float64 {
	var mu sync.Mutex
	usec := map[string]float64{}
	err := rdb.ForEachMaster(context.Background(), func(ctx context.Context, node *redis.Client) error {
		u, err := mainThreadUsec(ctx, node)
		mu.Lock()
		defer mu.Unlock()
		usec[node.Options().Addr] = u
		return err
	})
	require.NoError(b, err)
	return usec
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

// BenchmarkClusterSharded compares a filter of 6 shards of 200 KiB, and one
// of 19 shards of 64 KiB, with the same filter in one string on the CI
// cluster, 4 goroutines each running batches of 256 keys
// (reads of keys half of which were put), alternating the two, and reports
// the sharded filter's keys/s over the unsharded one's ("speedup"). It also
// reports the main-thread CPU time per key of the busiest master for each
// ("busiest-cpu-ns/key"), and their ratio ("node-bound-speedup"): the
// speedup where every node has a core of its own and the busiest one is the
// bottleneck, which this 2-core machine, running the client and six servers,
// cannot show directly.
func BenchmarkClusterSharded(b *testing.B) {
	for _, bench := range []struct {
		put    bool
		shards int
	}{{true, 6}, {true, 19}, {false, 6}, {false, 19}} {
		put, shardBytes := bench.put, int64(200<<10)
		if bench.shards == 19 {
			shardBytes = 64 << 10
		}
		name := "MightContainMany"
		if put {
			name = "PutMany"
		}
		b.Run(fmt.Sprintf("%s/shards=%d", name, bench.shards), func(b *testing.B) {
			rdb := sharedCluster(b)
			ctx := context.Background()
			open := func(opts ...redisfilter.Option) *redisfilter.Filter[string] {
				f, err := redisfilter.Open(ctx, rdb, filterName(b)+fmt.Sprint(len(opts)), funnel.String, 1_000_000, 0.01, opts...)
				require.NoError(b, err)
				b.Cleanup(func() { f.Delete(context.Background()) })
				return f
			}
			one, sharded := open(), open(redisfilter.WithShardBytes(shardBytes))
			require.Len(b, sharded.Keys(), bench.shards)
			keys := make([]string, 64*benchBatch)
			r := rand.New(rand.NewPCG(9, 10))
			for i := range keys {
				keys[i] = fmt.Sprintf("user:%d", r.Uint64())
			}
			if !put {
				for _, f := range []*redisfilter.Filter[string]{one, sharded} {
					require.NoError(b, f.PutMany(ctx, keys[:len(keys)/2]))
				}
			}
			var busiest [2]float64 // µs, of one and sharded
			run := func(f *redisfilter.Filter[string]) time.Duration {
				before := mastersUsec(b, rdb)
				defer func() {
					after, i := mastersUsec(b, rdb), 0
					if f == sharded {
						i = 1
					}
					var most float64
					for addr, usec := range after {
						most = max(most, usec-before[addr])
					}
					busiest[i] += most
				}()
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
			keysMoved := float64(b.N * len(keys))
			b.ReportMetric(busiest[0]*1000/keysMoved, "one-busiest-cpu-ns/key")
			b.ReportMetric(busiest[1]*1000/keysMoved, "sharded-busiest-cpu-ns/key")
			b.ReportMetric(busiest[0]/busiest[1], "node-bound-speedup")
		})
	}
}

// BenchmarkMightContainManyLarge reads 100,000 and 1,000,000 values, half
// of them put, in one call, and reports what it allocates per value
// (B/value): the buffers of its batches, which it reuses, and go-redis's
// replies, a slice of the bits read for each BITFIELD_RO.
func BenchmarkMightContainManyLarge(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f, _ := benchFilter(b)
			ctx := context.Background()
			keys := randomStrings(rand.New(rand.NewPCG(11, 12)), n)
			require.NoError(b, f.PutMany(ctx, keys[:len(keys)/2]))
			dst := make([]bool, 0, len(keys))
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			calls := 0
			for b.Loop() {
				var err error
				if dst, err = f.MightContainMany(ctx, dst[:0], keys); err != nil {
					b.Fatal(err)
				}
				calls++
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(calls*len(keys)), "B/value")
			reportKeys(b, calls*len(keys))
		})
	}
}
