package probe

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
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
// word to past the first-level cache, for k from 1 to above 64: the two
// passes of atomic writes for k up to 64, the loop of one pass beyond and
// for plain writes.
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
						require.False(t, putEach(mitz32, plain, h.H1, h.H2, k, a), "%s: putEach after Put", name)
						require.True(t, p.MightContain(h.H1, h.H2, k, a), "%s: MightContain after Put", name)
					}
					require.True(t, a.Equal(ref), "%s: Put set different bits", name)
				}
			}
		}
	}
}

// TestPutAnswersConcurrent puts each of a run of values from two
// goroutines at once, released together value by value. A bit is changed
// by exactly one call, so of the two Puts of a value that had clear bits
// at least one reports a change, and both only if it had two clear bits or
// more: a Put that answered from its first pass's loads rather than from
// what its atomic ORs changed would let both report the change of a value
// with one clear bit. Afterwards the array holds exactly the bits that one
// Put of each value sets.
func TestPutAnswersConcurrent(t *testing.T) {
	const goroutines = 2
	values := 20000
	if testing.Short() {
		values = 2000
	}
	for _, mitz32 := range []bool{false, true} {
		p := For(mitz32, false)
		for _, k := range []int{1, 2, 7} {
			name := fmt.Sprintf("mitz32=%v/k=%d", mitz32, k)
			r := rand.New(rand.NewPCG(7, uint64(k)))
			a, ref := bitarray.New(1<<10), bitarray.New(1<<10)
			hs := make([]Hash, values)
			clear := make([]int, values) // bits of hs[i] that no hs[j < i] set
			for i := range hs {
				hs[i] = Hash{H1: r.Uint64(), H2: r.Uint64()}
				for j := range k {
					if ref.Set(ref.Reduce(p.combined(hs[i], j))) {
						clear[i]++
					}
				}
			}
			var arrived atomic.Int64
			var changed [goroutines][]bool
			var done sync.WaitGroup
			for g := range goroutines {
				changed[g] = make([]bool, values)
				done.Add(1)
				go func() {
					defer done.Done()
					for i, h := range hs {
						// Wait for the other goroutine to finish the
						// value before and reach this one.
						arrived.Add(1)
						for spins := 0; arrived.Load() < int64((i+1)*goroutines); spins++ {
							if spins%1000 == 999 {
								runtime.Gosched()
							}
						}
						changed[g][i] = p.Put(h.H1, h.H2, k, a)
					}
				}()
			}
			done.Wait()
			for i := range hs {
				n := 0
				for g := range goroutines {
					if changed[g][i] {
						n++
					}
				}
				require.True(t, n >= min(1, clear[i]) && n <= clear[i], "%s: value %d with %d clear bits: %d of its Puts report a change", name, i, clear[i], n)
			}
			require.True(t, a.Equal(ref), "%s: Put set different bits", name)
		}
	}
}
