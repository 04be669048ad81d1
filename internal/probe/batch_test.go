package probe

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/stretchr/testify/require"
)

// TestLargeArrayLookups checks MightContain and MightContainMany on an
// array large enough for the batch calls to prefetch against the bits each
// probe names, computed with %, for both strategies and k from 1 to 33, on
// an array a quarter full.
func TestLargeArrayLookups(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a 9 MB array")
	}
	r := rand.New(rand.NewPCG(11, 12))
	words := prefetchMinWords + 5
	w := bitarray.MakeWords(words)
	for i := range w {
		w[i] = r.Uint64() & r.Uint64() // a quarter of the bits set
	}
	a := bitarray.FromWords(w)
	require.True(t, Prefetches(a))
	size := uint64(a.BitSize())
	for _, mitz32 := range []bool{false, true} {
		p := For(mitz32, false)
		for _, k := range []int{1, 2, 3, 7, 8, 13, 33} {
			name := fmt.Sprintf("mitz32=%v/k=%d", mitz32, k)
			// Every other value is put, the others are left to chance.
			hs := make([]Hash, BatchSize)
			for i := range hs {
				hs[i] = Hash{H1: r.Uint64(), H2: r.Uint64()}
				if i%2 == 0 {
					for j := range k {
						a.Set(p.combined(hs[i], j) % size)
					}
				}
			}
			want := make([]bool, len(hs))
			found := 0
			for i, h := range hs {
				want[i] = true
				for j := range k {
					want[i] = want[i] && a.Get(p.combined(h, j)%size)
				}
				if want[i] {
					found++
				}
			}
			require.Less(t, 10, found, "%s: too few present values", name)
			require.Less(t, found, len(hs)-10, "%s: too few absent values", name)
			out := make([]bool, len(hs))
			p.MightContainMany(hs, k, a, out)
			for i, h := range hs {
				require.Equal(t, want[i], p.MightContain(h.H1, h.H2, k, a), "%s: MightContain of value %d", name, i)
				require.Equal(t, want[i], out[i], "%s: MightContainMany of value %d", name, i)
			}
			// Batches shorter than a full one leave some lanes short or
			// empty.
			for _, m := range []int{1, 2, 3, laneSize + 1, BatchSize - 1} {
				p.MightContainMany(hs[:m], k, a, out)
				require.Equal(t, want[:m], out[:m], "%s: MightContainMany of %d values", name, m)
			}
		}
	}
}

// TestPrefetchedSmallArray checks MightContainManyPrefetched, which takes
// the prefetching path on any array, against MightContain on an array far
// below the size where MightContainMany would.
func TestPrefetchedSmallArray(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	w := bitarray.MakeWords(1000)
	for i := range w {
		w[i] = r.Uint64() | r.Uint64() // three quarters of the bits set
	}
	a := bitarray.FromWords(w)
	require.False(t, Prefetches(a))
	for _, mitz32 := range []bool{false, true} {
		p := For(mitz32, false)
		for _, k := range []int{1, 2, 5, 8} {
			hs := make([]Hash, BatchSize)
			for i := range hs {
				hs[i] = Hash{H1: r.Uint64(), H2: r.Uint64()}
			}
			out := make([]bool, len(hs))
			p.MightContainManyPrefetched(hs, k, a, out)
			found := 0
			for i, h := range hs {
				require.Equal(t, p.MightContain(h.H1, h.H2, k, a), out[i], "mitz32=%v k=%d value %d", mitz32, k, i)
				if out[i] {
					found++
				}
			}
			require.Positive(t, found, "mitz32=%v k=%d: no value present", mitz32, k)
			require.Less(t, found, len(hs), "mitz32=%v k=%d: every value present", mitz32, k)
		}
	}
}
