package strategy

type mitz32 struct{}

func (mitz32) Ordinal() int   { return 0 }
func (mitz32) String() string { return "MURMUR128_MITZ_32" }
func (mitz32) isStrategy()    {}

// probe32 yields MURMUR128_MITZ_32's combined hashes: with a and b the low
// and high 32 bits of h1, the ith (from 0) is a+(i+1)·b in int32
// arithmetic, as in Guava, complemented (not negated) when negative. The bit
// index is the combined hash modulo the bit size, so indexes never reach
// 2³¹, however large the filter.
type probe32 struct {
	a, b int32
}

func newProbe32(h1 uint64) probe32 {
	return probe32{a: int32(h1), b: int32(h1 >> 32)}
}

func (p probe32) combined(i int) uint64 {
	c := p.a + int32(i+1)*p.b
	if c < 0 {
		c = ^c
	}
	return uint64(c)
}

func (mitz32) AppendIndexes(dst []int64, h1, _ uint64, k int, bitSize int64) []int64 {
	p := newProbe32(h1)
	for i := range k {
		dst = append(dst, int64(p.combined(i)%uint64(bitSize)))
	}
	return dst
}
