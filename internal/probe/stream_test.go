package probe

import (
	"math/rand/v2"
	"testing"

	"github.com/mitzbloom/mitzbloom/internal/bitarray"
)

// streamLookups is a design of MightContainMany on a large array that was
// measured and not taken (bench/results/choices.md, "Lookups end with their
// batch"): a lookup fed batch after batch, whose two lanes never end with
// a batch. A lane's step tests each of its values' prefetched bit; a value
// whose bit is clear, or whose kth bit this was, leaves with its answer,
// and its place is taken at once by a value of the next batch, so that no
// round waits on a few values' misses alone. It made absent values faster
// and present ones slower than the lanes of MightContainMany, which end
// with their batch: each step moves every value's hash, answer place and
// round, where a round of the lanes moves one byte a value.
type streamLookups struct {
	ls  [2]streamLane
	cur int // the lane whose step is next
	fed int // the values fed so far
}

type streamLane struct {
	h   [laneSize]Hash
	o   [laneSize]int   // where the value's answer goes
	j   [laneSize]uint8 // its round; k is at most 255
	idx [laneSize]uint64
	n   int
}

// feed adds hs; the ith value fed to s answers in out[i].
func (s *streamLookups) feed(p Prober, hs []Hash, out []bool, k int, bits *bitarray.Array) {
	for len(hs) > 0 {
		hs = hs[s.step(p, hs, out, k, bits):]
	}
}

// finish answers the values still in flight.
func (s *streamLookups) finish(p Prober, out []bool, k int, bits *bitarray.Array) {
	for s.ls[0].n > 0 || s.ls[1].n > 0 {
		s.step(p, nil, out, k, bits)
	}
}

// step takes a step of the next lane, fills it from hs and prefetches its
// values' next words, 8 at a time as their indexes are computed. It
// returns how many of hs it took.
func (s *streamLookups) step(p Prober, hs []Hash, out []bool, k int, bits *bitarray.Array) int {
	const size = len(streamLane{}.h)
	l := &s.ls[s.cur]
	s.cur ^= 1
	m, issued := 0, 0
	for t, x := range l.idx[:l.n] {
		bit := bits.Bit(x)
		j := l.j[t] + 1
		out[l.o[t]] = bit != 0 // a value that goes on overwrites it later
		h := l.h[t]
		l.h[m], l.o[m], l.j[m] = h, l.o[t], j
		l.idx[m] = bits.Reduce(p.combined(h, int(j)))
		if int(j) == k {
			bit = 0
		}
		m += int(bit)
		if t%8 == 7 {
			bits.Prefetch(l.idx[issued:m])
			issued = m
		}
	}
	took := min(size-m, len(hs))
	for i, h := range hs[:took] {
		l.h[m+i], l.o[m+i], l.j[m+i] = h, s.fed+i, 0
		l.idx[m+i] = bits.Reduce(p.combined(h, 0))
	}
	s.fed += took
	l.n = m + took
	bits.Prefetch(l.idx[issued:l.n])
	return took
}

// TestStreamLookups checks the design that BenchmarkStreamLookups measures
// against MightContain, fed in pieces of every size, so that the figures
// are those of lookups that give the right answers.
func TestStreamLookups(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	w := bitarray.MakeWords(prefetchMinWords)
	for i := range w {
		w[i] = r.Uint64()
	}
	a := bitarray.FromWords(w)
	for _, mitz32 := range []bool{false, true} {
		p := For(mitz32, false)
		for _, k := range []int{1, 2, 7, 13} {
			hs := make([]Hash, 1000)
			for i := range hs {
				hs[i] = Hash{H1: r.Uint64(), H2: r.Uint64()}
				if i%3 == 0 {
					p.Put(hs[i].H1, hs[i].H2, k, a)
				}
			}
			for _, piece := range []int{1, 5, BatchSize, 333, len(hs)} {
				out := make([]bool, len(hs))
				var s streamLookups
				for lo := 0; lo < len(hs); lo += piece {
					s.feed(p, hs[lo:min(lo+piece, len(hs))], out, k, a)
				}
				s.finish(p, out, k, a)
				for i, h := range hs {
					if want := p.MightContain(h.H1, h.H2, k, a); out[i] != want {
						t.Fatalf("mitz32=%v k=%d piece=%d: value %d: got %v, want %v", mitz32, k, piece, i, out[i], want)
					}
				}
			}
		}
	}
}

// BenchmarkStreamLookups compares, on the 1e8-key array, MightContainMany
// a batch at a time with streamLookups fed the same batches, without
// hashing.
func BenchmarkStreamLookups(b *testing.B) {
	bigArray()
	p := For(false, false)
	keys := map[string][]Hash{"present": big.present, "absent": big.absent}
	for _, name := range []string{"present", "absent"} {
		hs := keys[name]
		b.Run("keys="+name+"/lookups=lanes", func(b *testing.B) {
			out := make([]bool, BatchSize)
			batchesOf(b, len(hs), func(lo, hi int) { p.MightContainMany(hs[lo:hi], bigK, big.bits, out) })
		})
		b.Run("keys="+name+"/lookups=stream", func(b *testing.B) {
			out := make([]bool, len(hs))
			var s streamLookups
			batchesOf(b, len(hs), func(lo, hi int) {
				if lo == 0 {
					s.finish(p, out, bigK, big.bits)
					s = streamLookups{}
				}
				s.feed(p, hs[lo:hi], out, bigK, big.bits)
			})
			s.finish(p, out, bigK, big.bits)
		})
	}
}
