package probe

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/internal/bitarray"
)

// TestEncodedLookups checks the lookups on bits in Guava's encoding
// against those on the array the encoding was made from, for both
// strategies, k from 1 to 33, batches of every length up to BatchSize, and
// arrays in the caches and large enough for the batch calls to prefetch,
// encoded at a misaligned offset, as a mapped file holds them after its
// 6-byte header.
func TestEncodedLookups(t *testing.T) {
	sizes := []int{1, 3, 1000}
	if !testing.Short() {
		sizes = append(sizes, prefetchMinWords+5)
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, words := range sizes {
		w := bitarray.MakeWords(words)
		for i := range w {
			w[i] = r.Uint64() | r.Uint64() // three quarters of the bits set
		}
		a := bitarray.FromWords(w)
		buf := make([]byte, 6+8*words)
		a.Encode(buf[6:], 0)
		e := bitarray.NewEncoded(buf[6:])
		for _, mitz32 := range []bool{false, true} {
			p := For(mitz32, false)
			for _, k := range []int{1, 2, 3, 7, 8, 13, 33} {
				name := fmt.Sprintf("words=%d/mitz32=%v/k=%d", words, mitz32, k)
				hs := make([]Hash, BatchSize)
				for i := range hs {
					hs[i] = Hash{H1: r.Uint64(), H2: r.Uint64()}
				}
				want, got := make([]bool, len(hs)), make([]bool, len(hs))
				for _, n := range []int{0, 1, 31, 32, 33, 64, 65, BatchSize - 1, BatchSize} {
					p.MightContainMany(hs[:n], k, a, want)
					p.MightContainManyEncoded(hs[:n], k, e, got)
					require.Equal(t, want[:n], got[:n], "%s: MightContainManyEncoded of %d values", name, n)
				}
				for i, h := range hs {
					require.Equal(t, want[i], p.MightContainEncoded(h.H1, h.H2, k, e), "%s: MightContainEncoded of value %d", name, i)
				}
			}
		}
	}
}
