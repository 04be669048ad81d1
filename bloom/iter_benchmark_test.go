package bloom_test

import (
	"fmt"
	"slices"
	"testing"

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
