package strategy

import (
	"math"
)

type mitz64 struct{}

func (mitz64) Ordinal() int   { return 1 }
func (mitz64) String() string { return "MURMUR128_MITZ_64" }
func (mitz64) isStrategy()    {}

// probe64 yields MURMUR128_MITZ_64's combined hashes: the ith (from 0) is
// h1+i·h2 with 64-bit wraparound and its sign bit cleared. Guava adds h2 at
// each step; the product gives the same value and, unlike a running sum,
// leaves no dependency from one probe to the next. The bit index is the
// combined hash modulo the bit size.
type probe64 struct {
	h1, h2 uint64
}

func (p probe64) combined(i int) uint64 {
	return (p.h1 + uint64(i)*p.h2) & math.MaxInt64
}

func (mitz64) AppendIndexes(dst []int64, h1, h2 uint64, k int, bitSize int64) []int64 {
	p := probe64{h1, h2}
	for i := range k {
		dst = append(dst, int64(p.combined(i)%uint64(bitSize)))
	}
	return dst
}
