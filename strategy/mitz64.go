package strategy

import (
	"math"

	"github.com/mitzbloom/mitzbloom/internal/bitarray"
)

type mitz64 struct{}

func (mitz64) Ordinal() int   { return 1 }
func (mitz64) String() string { return "MURMUR128_MITZ_64" }
func (mitz64) isStrategy()    {}

// probe64 yields MURMUR128_MITZ_64's indexes: h1, h1+h2, h1+2·h2, … with
// 64-bit wraparound, each with its sign bit cleared, modulo the bit size.
type probe64 struct {
	next, step, size uint64
}

func (p *probe64) index() uint64 {
	i := (p.next & math.MaxInt64) % p.size
	p.next += p.step
	return i
}

func (mitz64) Put(h1, h2 uint64, k int, bits *bitarray.Array) bool {
	p := probe64{h1, h2, uint64(bits.BitSize())}
	changed := false
	for range k {
		if bits.Set(p.index()) {
			changed = true
		}
	}
	return changed
}

func (mitz64) MightContain(h1, h2 uint64, k int, bits *bitarray.Array) bool {
	p := probe64{h1, h2, uint64(bits.BitSize())}
	for range k {
		if !bits.Get(p.index()) {
			return false
		}
	}
	return true
}

func (mitz64) AppendIndexes(dst []int64, h1, h2 uint64, k int, bitSize int64) []int64 {
	p := probe64{h1, h2, uint64(bitSize)}
	for range k {
		dst = append(dst, int64(p.index()))
	}
	return dst
}
