package strategy

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPutManyMatchesPut requires PutMany to set exactly the bits Put sets,
// and MightContainMany to answer as MightContain does, in every way PutMany
// can go: both strategies, plain and atomic writes, arrays below and above
// roundsMinWords, full and partial batches, and hashes that repeat.
func TestPutManyMatchesPut(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, s := range []Strategy{Murmur128Mitz64, Murmur128Mitz32} {
		for _, plain := range []bool{false, true} {
			p := ProberFor(s, plain)
			for _, words := range []int{1, 150, roundsMinWords - 1, roundsMinWords + 17} {
				for _, k := range []int{1, 7, 13} {
					name := fmt.Sprintf("%v/plain=%v/words=%d/k=%d", s, plain, words, k)
					one, many := bitarray.New(words), bitarray.New(words)
					var hs []Hash
					for range 40 * BatchSize {
						hs = append(hs, Hash{r.Uint64(), r.Uint64()})
					}
					hs = append(hs, hs[:BatchSize+3]...) // put again
					for _, h := range hs {
						p.Put(h.H1, h.H2, k, one)
					}
					for lo := 0; lo < len(hs); {
						n := min(1+r.IntN(BatchSize), len(hs)-lo)
						p.PutMany(hs[lo:lo+n], k, many)
						lo += n
					}
					require.True(t, one.Equal(many), "%s: PutMany set different bits", name)

					probes := append(hs[:2*BatchSize:2*BatchSize], make([]Hash, 2*BatchSize)...)
					for i := 2 * BatchSize; i < len(probes); i++ {
						probes[i] = Hash{r.Uint64(), r.Uint64()}
					}
					out := make([]bool, BatchSize)
					for lo := 0; lo < len(probes); lo += BatchSize {
						batch := probes[lo : lo+BatchSize]
						p.MightContainMany(batch, k, many, out)
						for i, h := range batch {
							assert.Equal(t, p.MightContain(h.H1, h.H2, k, one), out[i], "%s: probe %d", name, lo+i)
						}
					}
				}
			}
		}
	}
}

// TestMightContainMatchesIndexes checks MightContain, which tests bits in
// pairs, against the bits AppendIndexes names, for odd and even k, on arrays
// from empty to full.
func TestMightContainMatchesIndexes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range []Strategy{Murmur128Mitz64, Murmur128Mitz32} {
		p := ProberFor(s, false)
		for k := 1; k <= 8; k++ {
			bits := bitarray.New(40)
			found := 0
			for step := range 400 {
				for range 16 {
					bits.Set(r.Uint64N(uint64(bits.BitSize())))
				}
				h1, h2 := r.Uint64(), r.Uint64()
				want := true
				for _, i := range s.AppendIndexes(nil, h1, h2, k, bits.BitSize()) {
					want = want && bits.Get(uint64(i))
				}
				require.Equal(t, want, p.MightContain(h1, h2, k, bits), "%v k=%d step %d", s, k, step)
				if want {
					found++
				}
			}
			require.Less(t, 10, found, "%v k=%d: too few values found to test both answers", s, k)
			require.Less(t, found, 390, "%v k=%d: too few values absent to test both answers", s, k)
		}
	}
}
