package bloom

import (
	"math"

	"github.com/bits-and-blooms/bitset"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/javamath"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// BitSize returns the number of bits in f, a multiple of 64. Guava keeps its
// bitSize() package-private; it is the modulus of every index.
func (f *Filter[T]) BitSize() int64 { return f.bits.BitSize() }

// Funnel returns the funnel f was created or read with.
func (f *Filter[T]) Funnel() funnel.Funnel[T] { return f.funnel }

// NumHashFunctions returns k, the number of bits each value sets.
func (f *Filter[T]) NumHashFunctions() int { return f.k }

// Strategy returns the strategy f maps hashes to bits with.
func (f *Filter[T]) Strategy() strategy.Strategy { return f.strategy }

// BitCount returns the number of bits set in f. It reads every word of f.
func (f *Filter[T]) BitCount() int64 { return f.bits.Count() }

// Bits returns a snapshot of f's bits: bit i of the result is bit i of the
// filter, the bit that index i of the strategy sets.
func (f *Filter[T]) Bits() *bitset.BitSet { return bitset.From(f.bits.Words()) }

// ExpectedFPP returns the probability that MightContain returns true for a
// value that was never put, estimated from the fraction of bits set as
// Guava's expectedFpp() estimates it: (bitCount/bitSize)^k. It is 0 for an
// empty filter and 1 for a saturated one. The power is correctly rounded;
// Java's Math.pow almost always is too, and otherwise differs in the last bit.
func (f *Filter[T]) ExpectedFPP() float64 {
	return ExpectedFPP(f.bits.Count(), f.BitSize(), f.k)
}

// ApproximateElementCount estimates the number of distinct values put in f
// from the fraction of bits set, as Guava's approximateElementCount() does:
// -ln(1 - bitCount/bitSize) · bitSize / k, rounded half up. The estimate is
// good while f holds no more than its expected insertions.
//
// A saturated filter, every bit set, says nothing about how many values it
// holds: there Guava throws ArithmeticException, and ApproximateElementCount
// returns math.MaxInt64.
func (f *Filter[T]) ApproximateElementCount() int64 {
	return ApproximateElementCount(f.bits.Count(), f.BitSize(), f.k)
}

// ExpectedFPP returns what [Filter.ExpectedFPP] returns for a filter of
// bitSize bits and k hash functions with bitCount bits set, for a filter
// whose bits are counted elsewhere: in Redis with BITCOUNT, or in Java with
// Guava's bitCount. A bitCount outside [0, bitSize] counts as the nearest
// end; a bitSize or k that is not positive describes no filter, and gives 0.
func ExpectedFPP(bitCount, bitSize int64, k int) float64 {
	if bitSize <= 0 || k <= 0 {
		return 0
	}
	bitCount = min(max(bitCount, 0), bitSize)
	return javamath.PowInt(float64(bitCount)/float64(bitSize), k)
}

// ApproximateElementCount returns what [Filter.ApproximateElementCount]
// returns for a filter of bitSize bits and k hash functions with bitCount
// bits set, as [ExpectedFPP] does for the false-positive probability:
// math.MaxInt64 when every bit is set, and 0 for a bitSize or k that is
// not positive.
func ApproximateElementCount(bitCount, bitSize int64, k int) int64 {
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
