package strategy

import (
	"math"
)

type mitz64 struct{}

func (mitz64) Ordinal() int   { return 1 }
func (mitz64) String() string { return "MURMUR128_MITZ_64" }
func (mitz64) isStrategy()    {}

// probe64 yields MURMUR128_MITZ_64's combined hashes: h1, h1+h2, h1+2·h2, …
// with 64-bit wraparound, each with its sign bit cleared. The bit index is
// the combined hash modulo the bit size.
type probe64 struct {
	next, step uint64
}

func (p *probe64) combined() uint64 {
	c := p.next & math.MaxInt64
	p.next += p.step
	return c
}

func (mitz64) AppendIndexes(dst []int64, h1, h2 uint64, k int, bitSize int64) []int64 {
	p := probe64{h1, h2}
	for range k {
		dst = append(dst, int64(p.combined()%uint64(bitSize)))
	}
	return dst
}
