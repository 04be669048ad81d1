package strategy

import "github.com/mitzbloom/mitzbloom/internal/bitarray"

type mitz32 struct{}

func (mitz32) Ordinal() int   { return 0 }
func (mitz32) String() string { return "MURMUR128_MITZ_32" }
func (mitz32) isStrategy()    {}

// probe32 yields MURMUR128_MITZ_32's indexes: with a and b the low and high
// 32 bits of h1, the ith index (from 1) is a+i·b in int32 arithmetic,
// complemented (not negated) when negative, modulo the bit size. So indexes
// never reach 2³¹, however large the filter.
type probe32 struct {
	a, b, i int32
	size    uint64
}

func (p *probe32) index() uint64 {
	p.i++
	c := p.a + p.i*p.b
	if c < 0 {
		c = ^c
	}
	return uint64(c) % p.size
}

func newProbe32(h1 uint64, size uint64) probe32 {
	return probe32{a: int32(h1), b: int32(h1 >> 32), size: size}
}

func (mitz32) Put(h1, _ uint64, k int, bits *bitarray.Array) bool {
	p := newProbe32(h1, uint64(bits.BitSize()))
	changed := false
	for range k {
		if bits.Set(p.index()) {
			changed = true
		}
	}
	return changed
}

func (mitz32) MightContain(h1, _ uint64, k int, bits *bitarray.Array) bool {
	p := newProbe32(h1, uint64(bits.BitSize()))
	for range k {
		if !bits.Get(p.index()) {
			return false
		}
	}
	return true
}

func (mitz32) AppendIndexes(dst []int64, h1, _ uint64, k int, bitSize int64) []int64 {
	p := newProbe32(h1, uint64(bitSize))
	for range k {
		dst = append(dst, int64(p.index()))
	}
	return dst
}
