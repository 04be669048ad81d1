package raw

import "github.com/mitzbloom/mitzbloom/internal/estimate"

// ExpectedFPP returns what [bloom.Filter.ExpectedFPP] returns for a filter
// of bitSize bits and k hash functions with bitCount bits set, for a filter
// whose bits are counted elsewhere: in a shared store, or in Java with
// Guava's bitCount. A bitCount outside [0, bitSize] counts as the nearest
// end; a bitSize or k that is not positive describes no filter, and gives 0.
func ExpectedFPP(bitCount, bitSize int64, k int) float64 {
	return estimate.FPP(bitCount, bitSize, k)
}

// ApproximateElementCount returns what [bloom.Filter.ApproximateElementCount]
// returns for a filter of bitSize bits and k hash functions with bitCount
// bits set, as [ExpectedFPP] does for the false-positive probability:
// math.MaxInt64 when every bit is set, and 0 for a bitSize or k that is
// not positive.
func ApproximateElementCount(bitCount, bitSize int64, k int) int64 {
	return estimate.Count(bitCount, bitSize, k)
}
