package main

import (
	"testing"

	"github.com/mitzbloom/mitzbloom/bench"
)

// BenchmarkLimits runs the limits report's benchmarks, as sub-benchmarks
// named "n=1e8/key=int64/case=MightContainMany/present": the machine's
// limits over memory of the filter's size, then mitzbloom's operations on
// filters of n keys. Select a size with -bench 'Limits/n=1e8/'; the
// fixtures of one size and key type are made once and shared by its
// cases and runs. go -C bench run ./cmd/limits runs them all and writes the
// report of ratios.
func BenchmarkLimits(b *testing.B) {
	for _, n := range limitSizes {
		for _, key := range []string{"int64", "hostport"} {
			for _, c := range casesFor(key, n) {
				b.Run("n="+bench.SizeName(n)+"/key="+key+"/case="+c.Name, c.Run)
			}
		}
	}
	releaseFixtures()
}
