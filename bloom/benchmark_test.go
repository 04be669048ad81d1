package bloom_test

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
)

var benchSizes = []int64{1e4, 1e6}

var benchStrategies = map[string]strategy.Strategy{"mitz32": strategy.Murmur128Mitz32, "mitz64": strategy.Murmur128Mitz64}

func hostPort(i int64) string {
	return "10.0." + strconv.FormatInt(i>>8&255, 10) + "." + strconv.FormatInt(i&255, 10) + ":" + strconv.FormatInt(1024+i%60000, 10)
}

// benchKeys returns n keys of each kind, built before the timer starts.
func benchKeys[T any](n int64, key func(int64) T) []T {
	keys := make([]T, n)
	for i := range keys {
		keys[i] = key(int64(i))
	}
	return keys
}

func benchPut[T any](b *testing.B, f funnel.Funnel[T], n int64, s strategy.Strategy, key func(int64) T) {
	keys := benchKeys(n, key)
	filter, err := bloom.New(f, n, 0.01, bloom.WithStrategy(s))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		filter.Put(keys[i])
		if i++; i == len(keys) {
			i = 0
		}
	}
}

func benchMightContain[T any](b *testing.B, f funnel.Funnel[T], n int64, s strategy.Strategy, key func(int64) T) {
	filter, err := bloom.New(f, n, 0.01, bloom.WithStrategy(s))
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		filter.Put(key(i))
	}
	// Half the probes were put, half were not.
	probes := benchKeys(n, func(i int64) T { return key(i/2 + i%2*n) })
	b.ReportAllocs()
	i, found := 0, 0
	for b.Loop() {
		if filter.MightContain(probes[i]) {
			found++
		}
		if i++; i == len(probes) {
			i = 0
		}
	}
	sink = found
}

var sink int

// benchOp is the operation a benchmark measures, for every kind of key.
type benchOp struct {
	int64s  func(*testing.B, funnel.Funnel[int64], int64, strategy.Strategy, func(int64) int64)
	strings func(*testing.B, funnel.Funnel[string], int64, strategy.Strategy, func(int64) string)
}

// forEachCase runs op for each filter size, strategy and key kind, as
// sub-benchmarks named "funnel=int64/strategy=mitz64/n=10000".
func forEachCase(b *testing.B, op benchOp) {
	for _, n := range benchSizes {
		for name, s := range benchStrategies {
			b.Run(fmt.Sprintf("funnel=int64/strategy=%s/n=%d", name, n), func(b *testing.B) {
				op.int64s(b, funnel.Int64, n, s, func(i int64) int64 { return i })
			})
			b.Run(fmt.Sprintf("funnel=string/strategy=%s/n=%d", name, n), func(b *testing.B) {
				op.strings(b, funnel.String, n, s, hostPort)
			})
		}
	}
}

// BenchmarkPut measures Put on a filter sized for n at p = 0.01, cycling
// through n keys: the filter fills up to its expected insertions.
func BenchmarkPut(b *testing.B) {
	forEachCase(b, benchOp{benchPut[int64], benchPut[string]})
}

// BenchmarkMightContain measures MightContain on a full filter, half of the
// probes present and half absent.
func BenchmarkMightContain(b *testing.B) {
	forEachCase(b, benchOp{benchMightContain[int64], benchMightContain[string]})
}

// batchLen is how many values each batch call of the benchmarks takes.
const batchLen = 256

// benchMany runs do over b.N keys cycled from keys, batchLen at a time, so
// that ns/op is per key, comparable with the one-key benchmarks.
func benchMany[T any](b *testing.B, keys []T, do func([]T)) {
	b.ReportAllocs()
	b.ResetTimer()
	for done, i := 0, 0; done < b.N; {
		m := min(batchLen, b.N-done, len(keys)-i)
		do(keys[i : i+m])
		done += m
		if i += m; i == len(keys) {
			i = 0
		}
	}
}

func benchPutMany[T any](b *testing.B, f funnel.Funnel[T], n int64, s strategy.Strategy, key func(int64) T) {
	keys := benchKeys(n, key)
	filter, err := bloom.New(f, n, 0.01, bloom.WithStrategy(s))
	if err != nil {
		b.Fatal(err)
	}
	benchMany(b, keys, filter.PutMany)
}

func benchMightContainMany[T any](b *testing.B, f funnel.Funnel[T], n int64, s strategy.Strategy, key func(int64) T) {
	filter, err := bloom.New(f, n, 0.01, bloom.WithStrategy(s))
	if err != nil {
		b.Fatal(err)
	}
	filter.PutMany(benchKeys(n, key))
	probes := benchKeys(n, func(i int64) T { return key(i/2 + i%2*n) })
	answers := make([]bool, 0, batchLen)
	benchMany(b, probes, func(vs []T) { answers = filter.MightContainMany(answers[:0], vs) })
}

// BenchmarkPutMany measures PutMany in batches of 256 keys, per key, on the
// workload of BenchmarkPut.
func BenchmarkPutMany(b *testing.B) {
	forEachCase(b, benchOp{benchPutMany[int64], benchPutMany[string]})
}

// BenchmarkMightContainMany measures MightContainMany in batches of 256
// keys, per key, on the workload of BenchmarkMightContain.
func BenchmarkMightContainMany(b *testing.B) {
	forEachCase(b, benchOp{benchMightContainMany[int64], benchMightContainMany[string]})
}

// BenchmarkFill measures Put and PutMany into an empty filter, up to its
// expected insertions and then again into a new one, where most bits a Put
// sets are new: the cost of writing bits, atomically or plainly, and
// through a Builder, which writes plainly.
func BenchmarkFill(b *testing.B) {
	for _, n := range benchSizes {
		for _, m := range writeModes {
			for _, batch := range []bool{false, true} {
				op := "Put"
				if batch {
					op = "PutMany"
				}
				b.Run(fmt.Sprintf("n=%d/writes=%s/op=%s", n, m.name, op), func(b *testing.B) {
					benchFill(b, n, batch, m)
				})
			}
		}
		b.Run(fmt.Sprintf("n=%d/writes=builder/op=Put", n), func(b *testing.B) {
			benchFillBuilder(b, n)
		})
	}
}

// benchFillBuilder is benchFill's Put through a Builder.
func benchFillBuilder(b *testing.B, n int64) {
	keys := benchKeys(n, func(i int64) int64 { return i })
	builder, err := bloom.NewBuilder(funnel.Int64, n, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for done := 0; done < b.N; {
		chunk := keys[:min(len(keys), b.N-done)]
		for _, k := range chunk {
			builder.Put(k)
		}
		done += len(chunk)
		b.StopTimer()
		builder, _ = bloom.NewBuilder(funnel.Int64, n, 0.01)
		b.StartTimer()
	}
}

// BenchmarkPutNew sets a Put of new values, as BenchmarkFill's, beside a
// MightContain of a full filter, as BenchmarkMightContain's (half the
// values present), and of present values alone, at sizes within and beyond
// the caches: what setting a new value's bits costs over reading them.
func BenchmarkPutNew(b *testing.B) {
	for _, n := range []int64{1e4, 1e6, 1e7} {
		b.Run(fmt.Sprintf("n=%d/op=Put", n), func(b *testing.B) { benchFill(b, n, false, writeModes[0]) })
		b.Run(fmt.Sprintf("n=%d/op=MightContain", n), func(b *testing.B) {
			benchMightContain(b, funnel.Int64, n, strategy.Murmur128Mitz64, func(i int64) int64 { return i })
		})
		b.Run(fmt.Sprintf("n=%d/op=MightContainPresent", n), func(b *testing.B) {
			benchMightContainPresent(b, n)
		})
	}
}

// benchMightContainPresent probes a full filter of n int64 keys with the
// keys put, all present.
func benchMightContainPresent(b *testing.B, n int64) {
	keys := benchKeys(n, func(i int64) int64 { return i })
	filter, err := bloom.New(funnel.Int64, n, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	filter.PutMany(keys)
	b.ReportAllocs()
	i, found := 0, 0
	for b.Loop() {
		if filter.MightContain(keys[i]) {
			found++
		}
		if i++; i == len(keys) {
			i = 0
		}
	}
	sink = found
}

// benchFill puts b.N int64 keys into filters of n that write in mode m,
// each filled from empty to n keys and then replaced, outside the timer, by
// an empty one.
func benchFill(b *testing.B, n int64, batch bool, m writeMode) {
	keys := benchKeys(n, func(i int64) int64 { return i })
	filter := mustNewMode(b, m, funnel.Int64, n, 0.01)
	b.ReportAllocs()
	for done := 0; done < b.N; {
		chunk := keys[:min(len(keys), b.N-done)]
		if batch {
			for lo := 0; lo < len(chunk); lo += batchLen {
				filter.PutMany(chunk[lo:min(lo+batchLen, len(chunk))])
			}
		} else {
			for _, k := range chunk {
				filter.Put(k)
			}
		}
		done += len(chunk)
		b.StopTimer()
		filter = mustNewMode(b, m, funnel.Int64, n, 0.01)
		b.StartTimer()
	}
}

// BenchmarkPutParallel measures Put from all Ps at once, lock-free, against
// the same filter behind a sync.Mutex.
func BenchmarkPutParallel(b *testing.B) {
	const n = 1e6
	// Each goroutine starts at its own offset, so that they do not put the
	// same keys in lockstep and fight over the same cache lines.
	var goroutines atomic.Int64
	start := func() int64 { return goroutines.Add(1) * 7919 }
	b.Run("lock-free", func(b *testing.B) {
		filter, _ := bloom.New(funnel.Int64, n, 0.01)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := start(); pb.Next(); i++ {
				filter.Put(i % n)
			}
		})
	})
	b.Run("mutex", func(b *testing.B) {
		filter, _ := bloom.New(funnel.Int64, n, 0.01)
		var mu sync.Mutex
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := start(); pb.Next(); i++ {
				mu.Lock()
				filter.Put(i % n)
				mu.Unlock()
			}
		})
	})
}

func BenchmarkWriteTo(b *testing.B) {
	filter, _ := bloom.New(funnel.Int64, 1e6, 0.01)
	b.SetBytes(6 + filter.BitSize()/8)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := filter.MarshalBinary(); err != nil {
			b.Fatal(err)
		}
	}
}
