package raw_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// TestStatsOfCounts checks ExpectedFPP and ApproximateElementCount of bit
// counts against what Guava 31.1's expectedFpp() and
// approximateElementCount() returned for filters with those counts
// (docs/guava.md §8.3, vectors S1 to S8).
func TestStatsOfCounts(t *testing.T) {
	for _, c := range []struct {
		name              string
		bitSize, bitCount int64
		k                 int
		fpp               float64
		count             int64
	}{
		{"S1", 128, 14, 5, 1.5652738511562347e-5, 3},
		{"S2", 64, 15, 7, 3.884892407768348e-5, 2},
		{"S3", 768, 50, 5, 1.1696176720330872e-6, 10},
		{"S4", 768, 375, 5, 0.027755575615628914, 103},
		{"S5", 768, 10, 5, 3.7427765505058785e-10, 2},
		{"S6", 192, 13, 5, 1.4230187353773859e-6, 3},
		{"S7", 64, 0, 1, 0, 0},
		{"S8", 64, 6, 6, 6.789341568946838e-7, 1},
	} {
		assert.Equal(t, math.Float64bits(c.fpp), math.Float64bits(raw.ExpectedFPP(c.bitCount, c.bitSize, c.k)), "%s expected FPP", c.name)
		assert.Equal(t, c.count, raw.ApproximateElementCount(c.bitCount, c.bitSize, c.k), "%s approximate element count", c.name)
	}
	// Saturated: Guava's expectedFpp is 1, and its approximateElementCount
	// throws, where the Go API documents MaxInt64.
	assert.Equal(t, 1.0, raw.ExpectedFPP(64, 64, 1))
	assert.Equal(t, int64(math.MaxInt64), raw.ApproximateElementCount(64, 64, 1))
	// Counts out of range count as the nearest end; no filter gives 0.
	assert.Equal(t, 1.0, raw.ExpectedFPP(65, 64, 3))
	assert.Equal(t, 0.0, raw.ExpectedFPP(-1, 64, 3))
	assert.Equal(t, int64(0), raw.ApproximateElementCount(-1, 64, 3))
	for _, bad := range [][2]int64{{0, 3}, {-64, 3}, {64, 0}, {64, -1}} {
		assert.Zero(t, raw.ExpectedFPP(1, bad[0], int(bad[1])), "bitSize %d k %d", bad[0], bad[1])
		assert.Zero(t, raw.ApproximateElementCount(1, bad[0], int(bad[1])), "bitSize %d k %d", bad[0], bad[1])
	}
}

// TestStatsOfCountsMatchMethods requires the functions of counts to give
// the methods' results for the counts of real filters.
func TestStatsOfCountsMatchMethods(t *testing.T) {
	f := mustNew(t, funnel.Int64, 1000, 0.01)
	for i := range int64(3000) {
		if i%100 == 0 {
			assert.Equal(t, f.ExpectedFPP(), raw.ExpectedFPP(f.BitCount(), f.BitSize(), f.NumHashFunctions()))
			assert.Equal(t, f.ApproximateElementCount(), raw.ApproximateElementCount(f.BitCount(), f.BitSize(), f.NumHashFunctions()))
		}
		f.Put(i)
	}
}
