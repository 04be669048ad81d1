package bloom_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/funnel"
)

// seqChunk is how many keys each call of BenchmarkSeq takes, the batch
// calls' slices and the iterators' sequences alike.
const seqChunk = 4096

// BenchmarkSeq measures PutSeq and MightContainSeq beside PutMany and
// MightContainMany on the same keys, per key, on the workloads of
// BenchmarkPutMany and BenchmarkMightContainMany, in filters within the
// caches and beyond them (1e7 keys is 12 MB, where the batch calls
// prefetch): the iterators batch as the slice calls do, and should run at
// their speed. via=slice is PutMany or MightContainMany, via=seq PutSeq or
// MightContainSeq: compare them with benchstat -col /via.
func BenchmarkSeq(b *testing.B) {
	for _, n := range []int64{1e6, 1e7} {
		keys := benchKeys(n, func(i int64) int64 { return i })
		probes := benchKeys(n, func(i int64) int64 { return i/2 + i%2*n })
		full := mustNew(b, funnel.Int64, n, 0.01)
		full.PutMany(keys)
		answers := make([]bool, 0, seqChunk)
		b.Run(fmt.Sprintf("n=%d/op=Put/via=slice", n), func(b *testing.B) {
			f := mustNew(b, funnel.Int64, n, 0.01)
			benchChunks(b, keys, f.PutMany)
		})
		b.Run(fmt.Sprintf("n=%d/op=Put/via=seq", n), func(b *testing.B) {
			f := mustNew(b, funnel.Int64, n, 0.01)
			benchChunks(b, keys, func(vs []int64) { f.PutSeq(slices.Values(vs)) })
		})
		b.Run(fmt.Sprintf("n=%d/op=MightContain/via=slice", n), func(b *testing.B) {
			benchChunks(b, probes, func(vs []int64) {
				answers = full.MightContainMany(answers[:0], vs)
				for _, ok := range answers {
					if ok {
						sink++
					}
				}
			})
		})
		b.Run(fmt.Sprintf("n=%d/op=MightContain/via=seq", n), func(b *testing.B) {
			benchChunks(b, probes, func(vs []int64) {
				for _, ok := range full.MightContainSeq(slices.Values(vs)) {
					if ok {
						sink++
					}
				}
			})
		})
	}
}

// benchChunks runs do over b.N keys cycled from keys, seqChunk at a time,
// so that ns/op is per key.
func benchChunks[T any](b *testing.B, keys []T, do func([]T)) {
	b.ReportAllocs()
	b.ResetTimer()
	for done, i := 0, 0; done < b.N; {
		m := min(seqChunk, b.N-done, len(keys)-i)
		do(keys[i : i+m])
		done += m
		if i += m; i == len(keys) {
			i = 0
		}
	}
}

// BenchmarkSeqPaired measures the same as BenchmarkSeq, for a machine busy
// with other work, where separate benchmarks drift apart: each iteration
// times a chunk of keys through the slice call and the next chunk through
// the iterator, in turn first, and reports the time per key of each
// (slice-ns/key, seq-ns/key) and their ratio (seq/slice), from the same
// moments.
func BenchmarkSeqPaired(b *testing.B) {
	for _, n := range []int64{1e6, 1e7} {
		keys := benchKeys(n, func(i int64) int64 { return i })
		probes := benchKeys(n, func(i int64) int64 { return i/2 + i%2*n })
		full := mustNew(b, funnel.Int64, n, 0.01)
		full.PutMany(keys)
		answers := make([]bool, 0, seqChunk)
		b.Run(fmt.Sprintf("n=%d/op=Put", n), func(b *testing.B) {
			many, seq := mustNew(b, funnel.Int64, n, 0.01), mustNew(b, funnel.Int64, n, 0.01)
			benchPaired(b, keys, many.PutMany, func(vs []int64) { seq.PutSeq(slices.Values(vs)) })
		})
		b.Run(fmt.Sprintf("n=%d/op=MightContain", n), func(b *testing.B) {
			benchPaired(b, probes, func(vs []int64) {
				answers = full.MightContainMany(answers[:0], vs)
				for _, ok := range answers {
					if ok {
						sink++
					}
				}
			}, func(vs []int64) {
				for _, ok := range full.MightContainSeq(slices.Values(vs)) {
					if ok {
						sink++
					}
				}
			})
		})
	}
}

// benchPaired runs slice and seq on alternate chunks of seqChunk keys
// cycled from keys, b.N keys in all, and reports the time per key of each.
func benchPaired[T any](b *testing.B, keys []T, slice, seq func([]T)) {
	b.ReportAllocs()
	b.ResetTimer()
	var spent [2]time.Duration
	var done [2]int
	for i, chunk := 0, 0; done[0]+done[1] < b.N; chunk++ {
		m := min(seqChunk, b.N-done[0]-done[1], len(keys)-i)
		which := chunk % 2
		if chunk%4 >= 2 { // each goes first in turn
			which = 1 - which
		}
		start := time.Now()
		if which == 0 {
			slice(keys[i : i+m])
		} else {
			seq(keys[i : i+m])
		}
		spent[which] += time.Since(start)
		done[which] += m
		if i += m; i == len(keys) {
			i = 0
		}
	}
	perKey := func(w int) float64 { return float64(spent[w].Nanoseconds()) / float64(max(done[w], 1)) }
	b.ReportMetric(perKey(0), "slice-ns/key")
	b.ReportMetric(perKey(1), "seq-ns/key")
	b.ReportMetric(perKey(1)/perKey(0), "seq/slice")
}
