package bloom

import "github.com/mitzbloom/mitzbloom/internal/estimate"

// BitSize returns the number of bits in f, a multiple of 64: f takes
// BitSize()/8 bytes of memory. Guava keeps its bitSize() package-private;
// it is the modulus of every index.
func (f *Filter[T]) BitSize() int64 { return f.bits.BitSize() }

// NumHashFunctions returns k, the number of bits each value sets (a bit
// may be set by more than one of them).
func (f *Filter[T]) NumHashFunctions() int { return f.k }

// BitCount returns the number of bits set in f. It reads every word of f.
func (f *Filter[T]) BitCount() int64 { return f.bits.Count() }

// ExpectedFPP returns the probability that MightContain returns true for a
// value that was never put, estimated from the fraction of bits set as
// Guava's expectedFpp() estimates it: (bitCount/bitSize)^k. It is 0 for an
// empty filter and 1 for a saturated one. The power is correctly rounded;
// Java's Math.pow almost always is too, and otherwise differs in the last bit.
func (f *Filter[T]) ExpectedFPP() float64 {
	return estimate.FPP(f.bits.Count(), f.BitSize(), f.k)
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
	return estimate.Count(f.bits.Count(), f.BitSize(), f.k)
}
