package bloom_test

import (
	"math"
	"testing"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/race"
)

// TestZeroAllocsScalarAndSlice requires Put and MightContain to allocate
// nothing with the funnels of Go's other scalar types and with slice
// funnels of built-in elements.
func TestZeroAllocsScalarAndSlice(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop items at random, so allocation counts mean nothing; .ci/run also runs the tests without -race")
	}
	allocsOf(t, funnel.Int, -42)
	allocsOf(t, funnel.Uint, math.MaxUint)
	allocsOf(t, funnel.Uint32, math.MaxUint32)
	allocsOf(t, funnel.Float32, 1.5)
	allocsOf(t, funnel.Float64, math.Pi)
	allocsOf(t, funnel.Named("price/v1", funnel.Float64), math.E)
	allocsOf(t, funnel.Slice(funnel.String), []string{"ab", "c", ""})
	allocsOf(t, funnel.Slice(funnel.Int64), []int64{1, 2, 3})
	allocsOf(t, funnel.Slice(funnel.Slice(funnel.String)), [][]string{{"a"}, {"b", "c"}})
}
