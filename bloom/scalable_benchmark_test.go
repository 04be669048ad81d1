package bloom_test

import (
	"fmt"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// scalableBenchSizes are the numbers of keys of the Scalable benchmarks,
// each put in a Scalable made for a thousandth of them and in a Filter
// made for all of them: in the caches (1e4, 12 and 21 KB), in L2 or L3
// (1e6, 1.2 and 2 MB) and far larger than any cache (1e8, 120 and 206 MB,
// which take a minute to build).
var scalableBenchSizes = []int64{1e4, 1e6, 1e8}

// lookupFilter is what the lookup benchmarks probe.
type lookupFilter interface {
	MightContain(int64) bool
	MightContainMany([]bool, []int64) []bool
}

// scalableBenchFilters caches the filters of the benchmarks, which take long
// to build at 1e8 keys, by size and kind.
var scalableBenchFilters = map[string]lookupFilter{}

// scalableBenchFilter returns the filter of kind "single" or "scalable"
// holding keys 0 … n−1.
func scalableBenchFilter(b *testing.B, kind string, n int64) lookupFilter {
	key := fmt.Sprint(kind, n)
	if f, ok := scalableBenchFilters[key]; ok {
		return f
	}
	var f interface {
		lookupFilter
		PutMany([]int64)
	}
	if kind == "single" {
		f = mustNew(b, funnel.Int64, n, 0.01)
	} else {
		f = mustNewScalable(b, funnel.Int64, n/1000, 0.01)
	}
	batch := make([]int64, 0, 4096)
	for i := range n {
		batch = append(batch, i)
		if len(batch) == cap(batch) {
			f.PutMany(batch)
			batch = batch[:0]
		}
	}
	f.PutMany(batch)
	scalableBenchFilters[key] = f
	return f
}

// BenchmarkScalableLookup compares a Scalable grown 1,000 times past its
// initial size with one Filter sized for all its keys, on the same keys,
// one after the other in one run: MightContain and MightContainMany (256
// keys a call) of present keys, which a Scalable finds in its newest,
// largest stage half the time, and of absent keys, which it looks for in
// every stage. The probes go through the keys in the order of a stride
// coprime with n, so that consecutive probes share no cache lines.
func BenchmarkScalableLookup(b *testing.B) {
	for _, n := range scalableBenchSizes {
		for _, keys := range []string{"present", "absent"} {
			for _, op := range []string{"one", "many"} {
				for _, kind := range []string{"single", "scalable"} {
					b.Run(fmt.Sprintf("n=%.0e/keys=%s/op=%s/filter=%s", float64(n), keys, op, kind), func(b *testing.B) {
						benchScalableLookup(b, scalableBenchFilter(b, kind, n), n, keys == "absent", op == "many")
					})
				}
			}
		}
	}
}

func benchScalableLookup(b *testing.B, f lookupFilter, n int64, absent, many bool) {
	const stride = 1_000_003 // prime, so coprime with the powers of 10 of n
	probes := make([]int64, min(n, 1<<20))
	for i := range probes {
		probes[i] = int64(i) * stride % n
		if absent {
			probes[i] += n
		}
	}
	b.ReportAllocs()
	found := 0
	if many {
		const batch = 256
		out := make([]bool, 0, batch)
		i := 0
		for b.Loop() {
			out = f.MightContainMany(out[:0], probes[i:i+batch])
			for _, ok := range out {
				if ok {
					found++
				}
			}
			if i += batch; i+batch > len(probes) {
				i = 0
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/key")
	} else {
		i := 0
		for b.Loop() {
			if f.MightContain(probes[i]) {
				found++
			}
			if i++; i == len(probes) {
				i = 0
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/key")
	}
	sink = found
}

// BenchmarkScalableFill puts n keys, 256 a call with PutMany or one by one
// with Put, into a new Scalable made for n/1000, which grows ten times on
// the way, and into a new Filter made for n; making the filters is timed,
// since growing is part of a Scalable's filling. The result is per key.
func BenchmarkScalableFill(b *testing.B) {
	for _, n := range scalableBenchSizes[:2] {
		keys := benchKeys(n, func(i int64) int64 { return i })
		for _, op := range []string{"one", "many"} {
			for _, kind := range []string{"single", "scalable"} {
				b.Run(fmt.Sprintf("n=%.0e/op=%s/filter=%s", float64(n), op, kind), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						var f interface {
							Put(int64) bool
							PutMany([]int64)
						}
						if kind == "single" {
							f = mustNew(b, funnel.Int64, n, 0.01)
						} else {
							f = mustNewScalable(b, funnel.Int64, n/1000, 0.01)
						}
						if op == "many" {
							for i := 0; i < len(keys); i += 256 {
								f.PutMany(keys[i:min(i+256, len(keys))])
							}
						} else {
							for _, k := range keys {
								f.Put(k)
							}
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*n), "ns/key")
				})
			}
		}
	}
}

// The filters the benchmarks compare are those of the package's API.
var (
	_ lookupFilter = (*bloom.Filter[int64])(nil)
	_ lookupFilter = (*bloom.Scalable[int64])(nil)
)
