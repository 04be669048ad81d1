// Package estimate holds Guava's two statistics of a filter, computed from
// the number of its bits that are set: package bloom's methods and package
// raw's functions, for filters counted elsewhere, both call these, so that
// the formulas are written once.
package estimate

import (
	"math"

	"github.com/mitzbloom/mitzbloom/internal/javamath"
)

// FPP returns Guava's expectedFpp() of a filter of bitSize bits and k hash
// functions with bitCount bits set: (bitCount/bitSize)^k, correctly
// rounded. A bitCount outside [0, bitSize] counts as the nearest end; a
// bitSize or k that is not positive describes no filter, and gives 0.
func FPP(bitCount, bitSize int64, k int) float64 {
	if bitSize <= 0 || k <= 0 {
		return 0
	}
	bitCount = min(max(bitCount, 0), bitSize)
	return javamath.PowInt(float64(bitCount)/float64(bitSize), k)
}

// Count returns Guava's approximateElementCount() of a filter as FPP
// describes it: -ln(1 - bitCount/bitSize) · bitSize / k, rounded half up,
// or math.MaxInt64 when every bit is set (where Guava throws), and 0 for a
// bitSize or k that is not positive.
func Count(bitCount, bitSize int64, k int) int64 {
	if bitSize <= 0 || k <= 0 {
		return 0
	}
	bitCount = min(max(bitCount, 0), bitSize)
	fraction := float64(bitCount) / float64(bitSize)
	x := -math.Log1p(-fraction) * float64(bitSize) / float64(k)
	if math.IsInf(x, 0) {
		return math.MaxInt64
	}
	// Guava's DoubleMath.roundToLong(x, HALF_UP); x >= 0, where math.Round
	// rounds the same way.
	return int64(math.Round(x))
}
