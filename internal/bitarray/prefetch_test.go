package bitarray

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPrefetch runs the prefetch routine (or, with the purego tag and on
// other platforms, its stand-in) over every kind of index list: none, one,
// the first and last bit, and many at random. It must leave every bit as it
// was and keep Get's answers.
func TestPrefetch(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, words := range []int{1, 3, 1 << 12} {
		a := New(words)
		for range words * 16 {
			a.Set(r.Uint64N(uint64(words * 64)))
		}
		before := a.Words()
		last := uint64(a.BitSize() - 1)
		idx := []uint64{0, last, last - 63, 63, 64 % uint64(a.BitSize())}
		for range 1000 {
			idx = append(idx, r.Uint64N(uint64(a.BitSize())))
		}
		for _, list := range [][]uint64{nil, idx[:0], idx[:1], idx[:2], idx} {
			a.Prefetch(list)
		}
		assert.Equal(t, before, a.Words(), "%d words: Prefetch changed bits", words)
		for _, i := range idx {
			assert.Equal(t, before[i>>6]>>(i&63)&1 != 0, a.Get(i))
		}
	}
}

// BenchmarkPrefetch measures random loads from a 128 MiB array, each
// waiting for its answer, with and without a Prefetch of the whole batch of
// addresses first.
func BenchmarkPrefetch(b *testing.B) {
	const words = 16 << 20
	a := New(words)
	r := rand.New(rand.NewPCG(9, 10))
	idx := make([]uint64, 1<<16)
	for i := range idx {
		idx[i] = r.Uint64N(words * 64)
	}
	for _, pf := range []bool{false, true} {
		name := "loads"
		if pf {
			name = "prefetch+loads"
		}
		b.Run(name, func(b *testing.B) {
			var n uint64
			for done := 0; done < b.N; {
				batch := idx[done%len(idx):][:min(256, b.N-done, len(idx)-done%len(idx))]
				if pf {
					a.Prefetch(batch)
				}
				for _, x := range batch {
					n += a.Bit(x)
				}
				done += len(batch)
			}
			sinkBits = n
		})
	}
}

var sinkBits uint64
