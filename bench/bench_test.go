package bench_test

import (
	"testing"

	"github.com/mitzbloom/mitzbloom/bench"
)

// The benchmarks run every contender on every workload and size, as
// sub-benchmarks named "n=1e6/key=int64/filter=mitzbloom". Select with
// -bench, for instance -bench 'MightContain/n=1e6/' or
// -bench '/n=1e4/.*/filter=blobloom$'. A filter of 1e8 keys takes tens of
// seconds to fill, once per contender and key type: the benchmarks of a
// contender share it across -count runs and operations, as far as the
// order allows (see the fixture cache in fixture.go).

func BenchmarkPut(b *testing.B)                  { benchmarkOp(b, bench.Put) }
func BenchmarkMightContain(b *testing.B)         { benchmarkOp(b, bench.MightContain) }
func BenchmarkPutParallel(b *testing.B)          { benchmarkOp(b, bench.PutParallel) }
func BenchmarkMightContainParallel(b *testing.B) { benchmarkOp(b, bench.MightContainParallel) }

func benchmarkOp(b *testing.B, op bench.Op) {
	for _, n := range bench.Sizes {
		for _, w := range bench.Workloads() {
			for _, c := range w.ContenderNames() {
				b.Run(bench.SubName(n, w.KeyName(), c), w.Benchmark(op, c, n, bench.Config{}))
			}
		}
	}
}
