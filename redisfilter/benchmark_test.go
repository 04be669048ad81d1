package redisfilter_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
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
