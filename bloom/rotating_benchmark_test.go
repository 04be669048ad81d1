package bloom_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// putter is what the Put and MightContain benchmarks run, on a Filter or on
// a Rotating.
type putter[T any] interface {
	Put(T) bool
	MightContain(T) bool
	PutMany([]T)
	MightContainMany([]bool, []T) []bool
}

// rotatingBenchCases runs bench for each key kind and size on a Filter and
// on a Rotating sized alike, as sub-benchmarks named
// "funnel=string/n=10000/filter=rotating", so that each pair compares the
// two on one workload in one run.
func rotatingBenchCases(b *testing.B, int64s func(*testing.B, func(int64) int64, int64, func() putter[int64], func()), strings func(*testing.B, func(int64) string, int64, func() putter[string], func())) {
	for _, n := range benchSizes {
		// A window that never ends within a benchmark, on a clock that
		// moves only when the benchmark says.
		clock := bloomtest.NewClock(epoch)
		const w = time.Hour
		next := func() { clock.Advance(w) }
		b.Run(fmt.Sprintf("funnel=int64/n=%d/filter=single", n), func(b *testing.B) {
			int64s(b, func(i int64) int64 { return i }, n, func() putter[int64] { return mustNew(b, funnel.Int64, n, 0.01) }, nil)
		})
		b.Run(fmt.Sprintf("funnel=int64/n=%d/filter=rotating", n), func(b *testing.B) {
			int64s(b, func(i int64) int64 { return i }, n, func() putter[int64] {
				return mustNewRotating(b, funnel.Int64, n, 0.01, w, bloom.WithClock(clock))
			}, next)
		})
		b.Run(fmt.Sprintf("funnel=string/n=%d/filter=single", n), func(b *testing.B) {
			strings(b, hostPort, n, func() putter[string] { return mustNew(b, funnel.String, n, 0.01) }, nil)
		})
		b.Run(fmt.Sprintf("funnel=string/n=%d/filter=rotating", n), func(b *testing.B) {
			strings(b, hostPort, n, func() putter[string] {
				return mustNewRotating(b, funnel.String, n, 0.01, w, bloom.WithClock(clock))
			}, next)
		})
	}
}

// benchRotatingPut puts n/2 keys over and over in a filter sized for n:
// the first pass sets bits, the others find them set, and a Rotating's
// generation never fills, so the difference is Rotating's bookkeeping.
func benchRotatingPut[T any](b *testing.B, key func(int64) T, n int64, make func() putter[T], _ func()) {
	keys := benchKeys(n/2, key)
	f := make()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f.Put(keys[i])
		if i++; i == len(keys) {
			i = 0
		}
	}
}

// benchRotatingMightContain probes a filter holding n keys, half of the
// probes present and half absent. A Rotating holds the first n/2 keys in its
// previous generation and the others in its current one, so a present key is
// found in either, and an absent key is looked for in both.
func benchRotatingMightContain[T any](b *testing.B, key func(int64) T, n int64, make func() putter[T], nextWindow func()) {
	f := make()
	for i := range n {
		if i == n/2 && nextWindow != nil {
			nextWindow()
		}
		f.Put(key(i))
	}
	probes := benchKeys(n, func(i int64) T { return key(i/2 + i%2*n) })
	b.ReportAllocs()
	i, found := 0, 0
	for b.Loop() {
		if f.MightContain(probes[i]) {
			found++
		}
		if i++; i == len(probes) {
			i = 0
		}
	}
	sink = found
}

// benchRotatingPutMany is benchRotatingPut through PutMany, batchLen keys
// a call.
func benchRotatingPutMany[T any](b *testing.B, key func(int64) T, n int64, make func() putter[T], _ func()) {
	keys := benchKeys(n/2, key)
	f := make()
	benchMany(b, keys, f.PutMany)
}

// benchRotatingMightContainMany is benchRotatingMightContain through
// MightContainMany, batchLen keys a call.
func benchRotatingMightContainMany[T any](b *testing.B, key func(int64) T, n int64, newFilter func() putter[T], nextWindow func()) {
	f := newFilter()
	for i := range n {
		if i == n/2 && nextWindow != nil {
			nextWindow()
		}
		f.Put(key(i))
	}
	probes := benchKeys(n, func(i int64) T { return key(i/2 + i%2*n) })
	answers := make([]bool, 0, batchLen)
	benchMany(b, probes, func(vs []T) { answers = f.MightContainMany(answers[:0], vs) })
}

// BenchmarkRotatingPutMany compares Rotating.PutMany with Filter.PutMany.
func BenchmarkRotatingPutMany(b *testing.B) {
	rotatingBenchCases(b, benchRotatingPutMany[int64], benchRotatingPutMany[string])
}

// BenchmarkRotatingMightContainMany compares Rotating.MightContainMany
// with Filter.MightContainMany.
func BenchmarkRotatingMightContainMany(b *testing.B) {
	rotatingBenchCases(b, benchRotatingMightContainMany[int64], benchRotatingMightContainMany[string])
}

// BenchmarkRotatingPut compares Rotating.Put with Filter.Put.
func BenchmarkRotatingPut(b *testing.B) {
	rotatingBenchCases(b, benchRotatingPut[int64], benchRotatingPut[string])
}

// BenchmarkRotatingMightContain compares Rotating.MightContain with
// Filter.MightContain.
func BenchmarkRotatingMightContain(b *testing.B) {
	rotatingBenchCases(b, benchRotatingMightContain[int64], benchRotatingMightContain[string])
}

// BenchmarkRotatingPutNew is BenchmarkPutNew on a Rotating: Puts of new
// int64 keys into a generation filled from empty to 90% of its expected
// insertions, short of the rotation that the last few percent could
// start, and then replaced, outside the timer, by a new Rotating; beside
// MightContain of keys of the current generation, when it holds 90%.
func BenchmarkRotatingPutNew(b *testing.B) {
	for _, n := range []int64{1e4, 1e6, 1e7} {
		keys := benchKeys(n*9/10, func(i int64) int64 { return i })
		newRotating := func() *bloom.Rotating[int64] {
			return mustNewRotating(b, funnel.Int64, n, 0.01, time.Hour, bloom.WithClock(bloomtest.NewClock(epoch)))
		}
		b.Run(fmt.Sprintf("n=%d/op=Put", n), func(b *testing.B) {
			r := newRotating()
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; {
				chunk := keys[:min(len(keys), b.N-done)]
				for _, k := range chunk {
					r.Put(k)
				}
				done += len(chunk)
				b.StopTimer()
				r = newRotating()
				b.StartTimer()
			}
		})
		b.Run(fmt.Sprintf("n=%d/op=MightContain", n), func(b *testing.B) {
			r := newRotating()
			for _, k := range keys {
				r.Put(k)
			}
			b.ReportAllocs()
			i, found := 0, 0
			for b.Loop() {
				if r.MightContain(keys[i]) {
					found++
				}
				if i++; i == len(keys) {
					i = 0
				}
			}
			sink = found
		})
	}
}

// BenchmarkRotatingPutParallel puts from all Ps at once into a Filter and a
// Rotating sized for 1e6 that already hold the 5e5 keys put, as in the
// steady state of a deduplicating filter.
func BenchmarkRotatingPutParallel(b *testing.B) {
	const n, keys = 1e6, 5e5
	var goroutines atomic.Int64
	start := func() int64 { return goroutines.Add(1) * 7919 }
	run := func(b *testing.B, f putter[int64]) {
		for i := range int64(keys) {
			f.Put(i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for i := start(); pb.Next(); i++ {
				f.Put(i % keys)
			}
		})
	}
	b.Run("filter=single", func(b *testing.B) { run(b, mustNew(b, funnel.Int64, n, 0.01)) })
	b.Run("filter=rotating", func(b *testing.B) {
		run(b, mustNewRotating(b, funnel.Int64, n, 0.01, time.Hour, bloom.WithClock(bloomtest.NewClock(epoch))))
	})
}

// BenchmarkRotatingStream puts only new values, so that a generation fills
// every n Puts and the Put that fills it allocates the next: the cost per
// Put of a stream at full load, rotations included.
func BenchmarkRotatingStream(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			r := mustNewRotating(b, funnel.Int64, n, 0.01, time.Hour, bloom.WithClock(bloomtest.NewClock(epoch)))
			b.ReportAllocs()
			var v int64
			for b.Loop() {
				r.Put(v)
				v++
			}
			b.ReportMetric(float64(r.Stats().Rotations)/float64(b.N), "rotations/op")
		})
	}
}

// BenchmarkRotatingStreamParallel is BenchmarkRotatingStream from all Ps at
// once: every Put counts a new value, in the counter shard its hash picks.
func BenchmarkRotatingStreamParallel(b *testing.B) {
	const n = 1e6
	r := mustNewRotating(b, funnel.Int64, n, 0.01, time.Hour, bloom.WithClock(bloomtest.NewClock(epoch)))
	var goroutines atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for v := goroutines.Add(1) << 40; pb.Next(); v++ {
			r.Put(v)
		}
	})
	b.ReportMetric(float64(r.Stats().Rotations)/float64(b.N), "rotations/op")
}
