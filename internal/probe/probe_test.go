package probe

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
// prefetchMinWords, full and partial batches, and hashes that repeat.
func TestPutManyMatchesPut(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, mitz32 := range []bool{false, true} {
		for _, plain := range []bool{false, true} {
			p := For(mitz32, plain)
			for _, words := range []int{1, 150, prefetchMinWords - 1, prefetchMinWords + 17} {
				for _, k := range []int{1, 7, 13} {
					name := fmt.Sprintf("mitz32=%v/plain=%v/words=%d/k=%d", mitz32, plain, words, k)
					one, many := bitarray.New(words), bitarray.New(words)
					var hs []Hash
					for range 40 * BatchSize {
						hs = append(hs, Hash{H1: r.Uint64(), H2: r.Uint64()})
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
						probes[i] = Hash{H1: r.Uint64(), H2: r.Uint64()}
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

// TestPutAnswers requires Put to set exactly the bits of the strategy's
// index sequence and to report whether it changed any, on arrays from one
// word to past the first-level cache, for k from 1 to above 64.
func TestPutAnswers(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, mitz32 := range []bool{false, true} {
		for _, plain := range []bool{false, true} {
			p := For(mitz32, plain)
			for _, words := range []int{1, 150, 2048, 6144} {
				for _, k := range []int{1, 7, 13, 64, 70} {
					name := fmt.Sprintf("mitz32=%v/plain=%v/words=%d/k=%d", mitz32, plain, words, k)
					a, ref := bitarray.New(words), bitarray.New(words)
					hs := make([]Hash, min(4*words*64/k, 1000))
					for i := range hs {
						hs[i] = Hash{H1: r.Uint64(), H2: r.Uint64()}
					}
					for _, h := range append(hs, hs[:len(hs)/4]...) { // some put again
						want := false
						for i := range k {
							var c uint64
							if mitz32 {
								c = NewMitz32(h.H1).Combined(i)
							} else {
								c = Mitz64(h).Combined(i)
							}
							want = ref.Set(c%uint64(words*64)) || want
						}
						require.Equal(t, want, p.Put(h.H1, h.H2, k, a), "%s: Put's answer", name)
						require.True(t, p.MightContain(h.H1, h.H2, k, a), "%s: MightContain after Put", name)
					}
					require.True(t, a.Equal(ref), "%s: Put set different bits", name)
				}
			}
		}
	}
}
