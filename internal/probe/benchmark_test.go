package probe

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/mitzbloom/mitzbloom/internal/bitarray"
)

// The benchmarks here probe an array of the size of a filter of 1e8 keys at
// p = 0.01 (114 MiB, k = 7), half of whose bits are set, as in a full
// filter, with the code paths of this package side by side in one run.
const (
	bigWords = 14976654
	bigK     = 7
)

var big struct {
	once            sync.Once
	bits            *bitarray.Array
	present, absent []Hash
}

func bigArray() {
	big.once.Do(func() {
		w := bitarray.MakeWords(bigWords)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range w {
			w[i] = r.Uint64()
		}
		big.bits = bitarray.FromWords(w)
		p := For(false, false)
		for range 1 << 20 {
			h := Hash{r.Uint64(), r.Uint64()}
			p.Put(h.H1, h.H2, bigK, big.bits)
			big.present = append(big.present, h)
			big.absent = append(big.absent, Hash{r.Uint64(), r.Uint64()})
		}
	})
}

// batches calls f with b.N hashes cycled from hs, batch at a time, so that
// ns/op is per value.
func batches(b *testing.B, hs []Hash, batch int, f func(hs []Hash, out []bool)) {
	out := make([]bool, BatchSize)
	b.ResetTimer()
	for done, t := 0, 0; done < b.N; {
		m := min(batch, b.N-done, len(hs)-t)
		f(hs[t:t+m], out)
		done += m
		if t += m; t == len(hs) {
			t = 0
		}
	}
}

// BenchmarkBatch compares, on the 1e8-key array, MightContainMany and
// PutMany with the paths of an array in the caches (no prefetches: the
// batch code before prefetching), and in batches of 32 against BatchSize.
func BenchmarkBatch(b *testing.B) {
	bigArray()
	p := For(false, false)
	keys := map[string][]Hash{"present": big.present, "absent": big.absent}
	for _, name := range []string{"present", "absent"} {
		b.Run("op=MightContainMany/keys="+name+"/path=cached", func(b *testing.B) {
			batches(b, keys[name], smallBatch, func(hs []Hash, out []bool) { p.mightContainSmall(hs, bigK, big.bits, out) })
		})
		for _, size := range []int{smallBatch, BatchSize} {
			b.Run("op=MightContainMany/keys="+name+"/path=prefetched/batch="+strconv.Itoa(size), func(b *testing.B) {
				batches(b, keys[name], size, func(hs []Hash, out []bool) { p.MightContainMany(hs, bigK, big.bits, out) })
			})
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	fresh := make([]Hash, 1<<20)
	for i := range fresh {
		fresh[i] = Hash{r.Uint64(), r.Uint64()}
	}
	// New values set bits in the half-full array, a few percent more of
	// them over a run.
	b.Run("op=PutMany/path=cached", func(b *testing.B) {
		batches(b, fresh, BatchSize, func(hs []Hash, _ []bool) {
			for _, h := range hs {
				put(false, false, h.H1, h.H2, bigK, big.bits)
			}
		})
	})
	for _, size := range []int{smallBatch, BatchSize} {
		b.Run("op=PutMany/path=prefetched/batch="+strconv.Itoa(size), func(b *testing.B) {
			batches(b, fresh, size, func(hs []Hash, _ []bool) { p.PutMany(hs, bigK, big.bits) })
		})
	}
}
