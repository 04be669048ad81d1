package probe

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

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
			h := Hash{H1: r.Uint64(), H2: r.Uint64()}
			p.Put(h.H1, h.H2, bigK, big.bits)
			big.present = append(big.present, h)
			big.absent = append(big.absent, Hash{H1: r.Uint64(), H2: r.Uint64()})
		}
	})
}

// batches calls f with b.N hashes cycled from hs, batch at a time, so that
// ns/op is per value.
func batches(b *testing.B, hs []Hash, batch int, f func(hs []Hash, out []bool)) {
	out := make([]bool, max(batch, BatchSize))
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
// batch code before prefetching), in batches of 32 against BatchSize, the
// lanes of MightContainMany and PutMany against one batch going round by
// round, and batches of 64, 128 and 256 values in lanes of laneSize (two,
// four and eight lanes).
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
		b.Run("op=MightContainMany/keys="+name+"/path=rounds/batch="+strconv.Itoa(BatchSize), func(b *testing.B) {
			batches(b, keys[name], BatchSize, func(hs []Hash, out []bool) { p.mightContainRounds(hs, bigK, big.bits, out) })
		})
		for _, size := range lanesBatches {
			b.Run("op=MightContainMany/keys="+name+"/path=lanes/batch="+strconv.Itoa(size), func(b *testing.B) {
				ls := make([]lane, size/laneSize)
				batches(b, keys[name], size, func(hs []Hash, _ []bool) { p.runLanes(ls, hs, bigK, big.bits, false) })
			})
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	fresh := make([]Hash, 1<<20)
	for i := range fresh {
		fresh[i] = Hash{H1: r.Uint64(), H2: r.Uint64()}
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
	b.Run("op=PutMany/path=rounds/batch="+strconv.Itoa(BatchSize), func(b *testing.B) {
		batches(b, fresh, BatchSize, func(hs []Hash, _ []bool) { p.putManyRounds(hs, bigK, big.bits) })
	})
	for _, size := range lanesBatches {
		b.Run("op=PutMany/path=lanes/batch="+strconv.Itoa(size), func(b *testing.B) {
			ls := make([]lane, size/laneSize)
			batches(b, fresh, size, func(hs []Hash, _ []bool) { p.runLanes(ls, hs, bigK, big.bits, true) })
		})
	}
}

// lanesBatches are the batch sizes BenchmarkBatch runs in lanes of laneSize;
// a lane's live values are uint8 indexes, so a batch holds at most 256.
var lanesBatches = []int{64, 128, 256}

// BenchmarkLanesPaired compares batch sizes and numbers of lanes of
// MightContainMany and PutMany on the 1e8-key array by taking them in
// turn, a chunk of 1,024 values each, a round of turns after another, in
// one loop: a busy machine's slow spells then fall on all of them alike,
// where runs one after another, even alternated, can catch one variant in a
// slow spell and the next in a fast one, and the medians over the rounds
// leave out the rounds a slow spell hit. ns/op is per value over all of
// them; each variant's median time per value is its metric
// "ns/value-b<batch>-l<lanes>", and "x-b<batch>-l<lanes>" the median of its
// time over that of the first, BatchSize in nLanes lanes. A lane holds at
// most laneSize values, so variants with larger lanes (the batches of 64 in
// two lanes of 32 and of 128 in two lanes of 64 that the lookups took
// before) run only in a test binary built with laneSize set to 64, where
// the first variant is then 128 in two lanes of 64. Each
// chunk is new values, so none is in the caches from the variant before.
func BenchmarkLanesPaired(b *testing.B) {
	bigArray()
	p := For(false, false)
	var variants []struct{ batch, lanes int }
	for _, v := range []struct{ batch, lanes int }{{BatchSize, nLanes}, {128, 8}, {128, 2}, {64, 2}, {128, 4}, {64, 4}, {64, 8}, {256, 16}} {
		if (v.batch+v.lanes-1)/v.lanes <= laneSize && !slices.Contains(variants, v) {
			variants = append(variants, v)
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	fresh := make([]Hash, 1<<20)
	for i := range fresh {
		fresh[i] = Hash{H1: r.Uint64(), H2: r.Uint64()}
	}
	// PutMany sets bits in the half-full array, a few percent more of
	// them over a run, for every variant alike.
	keys := map[string][]Hash{"MightContainMany/keys=present": big.present, "MightContainMany/keys=absent": big.absent, "PutMany/keys=new": fresh}
	const chunk = 1024
	for _, name := range []string{"MightContainMany/keys=present", "MightContainMany/keys=absent", "PutMany/keys=new"} {
		put := name == "PutMany/keys=new"
		b.Run("op="+name, func(b *testing.B) {
			hs := keys[name]
			var ls [16]lane
			elapsed := make([][]float64, len(variants)) // ns a value, per round
			t := 0
			for done := 0; done < b.N; done += chunk * len(variants) {
				for v, va := range variants {
					start := time.Now()
					for i := 0; i < chunk; i += va.batch {
						p.runLanes(ls[:va.lanes], hs[t+i:t+i+va.batch], bigK, big.bits, put)
					}
					elapsed[v] = append(elapsed[v], float64(time.Since(start).Nanoseconds())/chunk)
					t = (t + chunk) % len(hs)
				}
			}
			for v, va := range variants {
				if v > 0 {
					ratios := make([]float64, len(elapsed[0]))
					for i := range ratios {
						ratios[i] = elapsed[v][i] / elapsed[0][i]
					}
					b.ReportMetric(medianOf(ratios), fmt.Sprintf("x-b%d-l%d", va.batch, va.lanes))
				}
				b.ReportMetric(medianOf(elapsed[v]), fmt.Sprintf("ns/value-b%d-l%d", va.batch, va.lanes))
			}
		})
	}
}

// medianOf returns the median of xs, which it sorts.
func medianOf(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// BenchmarkSingle times single lookups on the 1e8-key array, chained (each
// lookup's key chosen by the answer before, so that ns/op is the latency of
// one lookup) and independent, for present, absent and mixed values, with
// the ways of ordering a lookup's loads below side by side, and the limits
// they approach over the same memory: one dependent load, and k loads
// together.
func BenchmarkSingle(b *testing.B) {
	bigArray()
	b.Run("limit=dependent-load", func(b *testing.B) {
		n := uint64(big.bits.WordCount())
		x := uint64(0)
		i := uint64(0)
		for b.Loop() {
			w, _ := bits.Mul64((x^i)*0x9e3779b97f4a7c15, n)
			x = big.bits.Word(int(w))
			i++
		}
		runtime.KeepAlive(x)
	})
	b.Run("limit=k-loads", func(b *testing.B) {
		n := uint64(big.bits.WordCount())
		x := uint64(0)
		i := uint64(0)
		for b.Loop() {
			var acc uint64
			for j := range uint64(bigK) {
				w, _ := bits.Mul64((x^(i*bigK+j))*0x9e3779b97f4a7c15, n)
				acc += big.bits.Word(int(w))
			}
			x = acc
			i++
		}
		runtime.KeepAlive(x)
	})
	mixed := make([]Hash, len(big.present))
	for i := range mixed {
		mixed[i] = big.present[i]
		if i%2 == 1 {
			mixed[i] = big.absent[i]
		}
	}
	for i := range 1 << 12 {
		for _, h := range []Hash{big.present[i], big.absent[i]} {
			want := mightContain(false, h.H1, h.H2, bigK, big.bits)
			for _, l := range singleLookups {
				if l.f(h.H1, h.H2, bigK, big.bits) != want {
					b.Fatalf("lookup %s disagrees with MightContain", l.name)
				}
			}
		}
	}
	keys := map[string][]Hash{"present": big.present, "absent": big.absent, "mixed": mixed}
	for _, name := range []string{"present", "absent", "mixed"} {
		for _, l := range singleLookups {
			f := l.f
			b.Run("keys="+name+"/lookups=chained/lookup="+l.name, func(b *testing.B) {
				hs := keys[name]
				t := 0
				for b.Loop() {
					h := hs[t]
					t += 1 + b2u(f(h.H1, h.H2, bigK, big.bits))
					if t >= len(hs) {
						t -= len(hs)
					}
				}
			})
			b.Run("keys="+name+"/lookups=independent/lookup="+l.name, func(b *testing.B) {
				hs := keys[name]
				t, found := 0, 0
				for b.Loop() {
					h := hs[t]
					found += b2u(f(h.H1, h.H2, bigK, big.bits))
					if t++; t == len(hs) {
						t = 0
					}
				}
				runtime.KeepAlive(found)
			})
		}
	}
}

// b2u returns 1 for true and 0 for false as data, so that the next lookup
// depends on the answer rather than on a predicted branch.
func b2u(v bool) int { return int(*(*uint8)(unsafe.Pointer(&v))) }

// singleLookups are the ways of ordering a MITZ_64 lookup's loads that
// BenchmarkSingle compares, all with MightContain's answers.
var singleLookups = []struct {
	name string
	f    func(h1, h2 uint64, k int, a *bitarray.Array) bool
}{
	// MightContain: pairs of probes, a branch after each pair.
	{"pairs", func(h1, h2 uint64, k int, a *bitarray.Array) bool { return mightContain(false, h1, h2, k, a) }},
	// All k words prefetched, then tested in pairs.
	{"prefetch-all", func(h1, h2 uint64, k int, a *bitarray.Array) bool {
		idx := indexes(h1, h2, k, a)
		a.Prefetch(idx[:k])
		return pairsOf(idx[:k], a)
	}},
	// The first pair's loads issued, the other k−2 words prefetched, then
	// the pairs tested.
	{"first-pair-then-prefetch", func(h1, h2 uint64, k int, a *bitarray.Array) bool {
		idx := indexes(h1, h2, k, a)
		first := a.Bit(idx[0]) & a.Bit(idx[1])
		a.Prefetch(idx[2:k])
		return first != 0 && pairsOf(idx[2:k], a)
	}},
	// Every bit loaded, one branch-free answer.
	{"branch-free", func(h1, h2 uint64, k int, a *bitarray.Array) bool {
		p := Mitz64{h1, h2}
		all := uint64(1)
		for i := range k {
			all &= a.Bit(a.Reduce(p.Combined(i)))
		}
		return all != 0
	}},
	// The first pair behind a branch, the other k−2 bits without.
	{"pair-then-branch-free", func(h1, h2 uint64, k int, a *bitarray.Array) bool {
		p := Mitz64{h1, h2}
		if a.Bit(a.Reduce(p.Combined(0)))&a.Bit(a.Reduce(p.Combined(1))) == 0 {
			return false
		}
		all := uint64(1)
		for i := 2; i < k; i++ {
			all &= a.Bit(a.Reduce(p.Combined(i)))
		}
		return all != 0
	}},
	// Two pairs behind branches, the other k−4 bits without.
	{"two-pairs-then-branch-free", func(h1, h2 uint64, k int, a *bitarray.Array) bool {
		p := Mitz64{h1, h2}
		for i := 0; i < 4; i += 2 {
			if a.Bit(a.Reduce(p.Combined(i)))&a.Bit(a.Reduce(p.Combined(i+1))) == 0 {
				return false
			}
		}
		all := uint64(1)
		for i := 4; i < k; i++ {
			all &= a.Bit(a.Reduce(p.Combined(i)))
		}
		return all != 0
	}},
}

// indexes returns the k bit indexes of the hash (h1, h2), k ≤ 16.
func indexes(h1, h2 uint64, k int, a *bitarray.Array) [16]uint64 {
	var idx [16]uint64
	p := Mitz64{h1, h2}
	for i := range idx[:k] {
		idx[i] = a.Reduce(p.Combined(i))
	}
	return idx
}

// pairsOf tests the bits idx in pairs, as mightContain does.
func pairsOf(idx []uint64, a *bitarray.Array) bool {
	i := 0
	for ; i+1 < len(idx); i += 2 {
		if a.Bit(idx[i])&a.Bit(idx[i+1]) == 0 {
			return false
		}
	}
	return i == len(idx) || a.Get(idx[i])
}

// BenchmarkPutNew times a single Put of a value whose bits are about half
// clear, into arrays of the sizes of filters of 1e4 to 1e8 keys at p = 0.01
// half of whose bits are set, beside MightContain of a present value on the
// same array, and the parts of such a Put:
//
//   - op=Put: Prober.Put, atomic writes;
//   - op=PutPlain: Put with plain writes (no locked instruction);
//   - op=PutEach: the loop of one pass, each bit read and then set;
//   - op=ClearMask: the k loads and the mask of clear probes that Put
//     builds, from the first probe on, nothing written;
//   - op=PutPresent: Put of a value already present, which changes nothing;
//   - op=MightContain: a lookup of a value present.
//
// The values come from a pool of 1<<16, n/20 at a time (at most 1<<14):
// after each window the array's words are put back, outside the timer, and
// the next window puts other values, so that the sequence of bits found
// clear repeats only every 1<<16 Puts, too long for the branch predictor
// to learn.
func BenchmarkPutNew(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	pool := make([]Hash, 1<<16)
	for i := range pool {
		pool[i] = Hash{H1: r.Uint64(), H2: r.Uint64()}
	}
	for _, n := range []int64{1e4, 3e4, 1e6, 1e7, 1e8} {
		words := int(n*9585/1000/64) + 1
		w := bitarray.MakeWords(words)
		for i := range w {
			w[i] = r.Uint64()
		}
		saved := append([]uint64(nil), w...)
		a := bitarray.FromWords(w)
		window := int(min(n/20, 1<<14))
		puts := []struct {
			name string
			f    func(h Hash) bool
		}{
			{"Put", func(h Hash) bool { return For(false, false).Put(h.H1, h.H2, bigK, a) }},
			{"PutPlain", func(h Hash) bool { return For(false, true).Put(h.H1, h.H2, bigK, a) }},
			{"PutEach", func(h Hash) bool { return putEach(false, false, h.H1, h.H2, bigK, a) }},
			{"ClearMask", func(h Hash) bool { return clearMask(h.H1, h.H2, bigK, a) != 0 }},
		}
		for _, op := range puts {
			f := op.f
			b.Run(fmt.Sprintf("n=%.0e/op=%s", float64(n), op.name), func(b *testing.B) {
				changed := 0
				for i, t := 0, 0; i < b.N; i++ {
					if i%window == 0 && i > 0 {
						b.StopTimer()
						copy(w, saved)
						b.StartTimer()
					}
					if f(pool[t]) {
						changed++
					}
					if t++; t == len(pool) {
						t = 0
					}
				}
				b.StopTimer()
				copy(w, saved)
				sinkInt = changed
			})
		}
		present := []struct {
			name string
			f    func(h Hash) bool
		}{
			{"PutPresent", func(h Hash) bool { return For(false, false).Put(h.H1, h.H2, bigK, a) }},
			{"MightContain", func(h Hash) bool { return For(false, false).MightContain(h.H1, h.H2, bigK, a) }},
		}
		for _, op := range present {
			f := op.f
			b.Run(fmt.Sprintf("n=%.0e/op=%s", float64(n), op.name), func(b *testing.B) {
				hs := pool[:window]
				for _, h := range hs {
					For(false, false).Put(h.H1, h.H2, bigK, a)
				}
				b.ResetTimer()
				found := 0
				for i := 0; i < b.N; i++ {
					if f(hs[i%len(hs)]) {
						found++
					}
				}
				b.StopTimer()
				copy(w, saved)
				sinkInt = found
			})
		}
	}
}

// clearMask is the mask of the MITZ_64 probes whose bit is clear, probe i
// at bit k−1−i, as put builds it, from the first probe on.
func clearMask(h1, h2 uint64, k int, bits *bitarray.Array) uint64 {
	p := Mitz64{h1, h2}
	clear := uint64(0)
	for i := range k {
		clear = clear<<1 | (bits.Bit(bits.Reduce(p.Combined(i))) ^ 1)
	}
	return clear
}

var sinkInt int

// mightContainRounds is MightContainMany on a large array in one lane, each
// round prefetched and then tested, for BenchmarkBatch to compare: the
// core waits for the last of a round's misses before the next round's
// prefetches go out.
func (p Prober) mightContainRounds(hs []Hash, k int, bits *bitarray.Array, out []bool) {
	var live [BatchSize]uint8
	var idx [BatchSize]uint64
	n := len(hs)
	for i := range n {
		live[i] = uint8(i)
	}
	for j := 0; j < k && n > 0; j++ {
		for t, i := range live[:n] {
			idx[t] = bits.Reduce(p.combined(hs[i], j))
		}
		bits.Prefetch(idx[:n])
		m := 0
		for t, i := range live[:n] {
			live[m] = i
			m += int(bits.Bit(idx[t]))
		}
		n = m
	}
	clear(out[:len(hs)])
	for _, i := range live[:n] {
		out[i] = true
	}
}

// putManyRounds is PutMany on a large array in one lane, for BenchmarkBatch
// to compare, as mightContainRounds is MightContainMany.
func (p Prober) putManyRounds(hs []Hash, k int, bits *bitarray.Array) {
	var idx [BatchSize]uint64
	for j := range k {
		for i := range hs {
			idx[i] = bits.Reduce(p.combined(hs[i], j))
		}
		bits.Prefetch(idx[:len(hs)])
		c := 0
		for _, x := range idx[:len(hs)] {
			idx[c] = x
			c += int(bits.Bit(x) ^ 1)
		}
		for _, x := range idx[:c] {
			bits.Set(x)
		}
	}
}

// BenchmarkBatchParts takes the batch calls on the 1e8-key array apart, per
// value, to show where the time over the gather limit goes (the figures are
// in bench's README, "Against the machine's limits"):
//
//   - parts=all: MightContainMany and PutMany, fed hashes (no hashing);
//   - parts=no-index: the same lanes fed each probe's bit index,
//     computed beforehand, so that only the loads, the prefetches and the
//     lanes' bookkeeping remain;
//   - parts=plain-writes: PutMany with plain writes, no locked instruction;
//   - parts=index-only: the k bit indexes of a value computed, nothing
//     loaded;
//   - limit=gather: a plain loop of the loads a present value needs, k a
//     value, at indexes computed beforehand.
//
// The indexes computed beforehand are 4 bytes a probe (the array's bit
// indexes fit 32 bits), for 1<<19 values of each kind, read in order. The
// PutMany cases put new values as long as b.N is at most 1<<19: run them
// with -benchtime 524288x.
func BenchmarkBatchParts(b *testing.B) {
	bigArray()
	p := For(false, false)
	const pool = 1 << 19
	r := rand.New(rand.NewPCG(7, 8))
	fresh := make([]Hash, pool)
	for i := range fresh {
		fresh[i] = Hash{H1: r.Uint64(), H2: r.Uint64()}
	}
	keys := map[string][]Hash{"present": big.present[:pool], "absent": big.absent[:pool]}
	idx := map[string][]uint32{}
	for name, hs := range keys {
		x := make([]uint32, 0, len(hs)*bigK)
		for _, h := range hs {
			for j := range bigK {
				x = append(x, uint32(big.bits.Reduce(Mitz64(h).Combined(j))))
			}
		}
		idx[name] = x
	}
	for _, name := range []string{"present", "absent"} {
		b.Run("op=MightContainMany/keys="+name+"/parts=all", func(b *testing.B) {
			out := make([]bool, BatchSize)
			batchesOf(b, len(keys[name]), func(lo, hi int) { p.MightContainMany(keys[name][lo:hi], bigK, big.bits, out) })
		})
		b.Run("op=MightContainMany/keys="+name+"/parts=no-index", func(b *testing.B) {
			var ls [nLanes]lane
			batchesOf(b, len(keys[name]), func(lo, hi int) { runLanesIdx(p, ls[:], idx[name][lo*bigK:hi*bigK], bigK, big.bits, false) })
		})
	}
	// Each run of a PutMany puts values that no run before it put: the
	// pool's hashes with the run's number mixed in, and their indexes.
	runs := uint64(0)
	newValues := func() ([]Hash, []uint32) {
		runs++
		hs := make([]Hash, pool)
		x := make([]uint32, 0, pool*bigK)
		for i, h := range fresh {
			hs[i] = Hash{H1: h.H1 ^ runs*0x9e3779b97f4a7c15, H2: h.H2 ^ runs*0xbf58476d1ce4e5b9}
			for j := range bigK {
				x = append(x, uint32(big.bits.Reduce(Mitz64(hs[i]).Combined(j))))
			}
		}
		return hs, x
	}
	b.Run("op=PutMany/keys=new/parts=all", func(b *testing.B) {
		hs, _ := newValues()
		batchesOf(b, pool, func(lo, hi int) { p.PutMany(hs[lo:hi], bigK, big.bits) })
	})
	b.Run("op=PutMany/keys=new/parts=no-index", func(b *testing.B) {
		_, x := newValues()
		var ls [nLanes]lane
		batchesOf(b, pool, func(lo, hi int) { runLanesIdx(p, ls[:], x[lo*bigK:hi*bigK], bigK, big.bits, true) })
	})
	b.Run("op=PutMany/keys=new/parts=plain-writes", func(b *testing.B) {
		hs, _ := newValues()
		pp := For(false, true)
		batchesOf(b, pool, func(lo, hi int) { pp.PutMany(hs[lo:hi], bigK, big.bits) })
	})
	b.Run("op=index-only", func(b *testing.B) {
		hs := keys["present"]
		var acc uint64
		t := 0
		for b.Loop() {
			h := Mitz64(hs[t])
			for j := range bigK {
				acc ^= big.bits.Reduce(h.Combined(j))
			}
			if t++; t == len(hs) {
				t = 0
			}
		}
		runtime.KeepAlive(acc)
	})
	b.Run("limit=gather", func(b *testing.B) {
		x := idx["present"]
		var acc uint64
		t := 0
		for b.Loop() {
			for _, i := range x[t : t+bigK] {
				acc += big.bits.Word(int(i >> 6))
			}
			if t += bigK; t == len(x) {
				t = 0
			}
		}
		runtime.KeepAlive(acc)
	})
}

// batchesOf calls f with b.N values' bounds [lo, hi) cycled from n, BatchSize
// at a time, so that ns/op is per value.
func batchesOf(b *testing.B, n int, f func(lo, hi int)) {
	b.ResetTimer()
	for done, t := 0, 0; done < b.N; {
		m := min(BatchSize, b.N-done, n-t)
		f(t, t+m)
		done += m
		if t += m; t == n {
			t = 0
		}
	}
}

// runLanesIdx is runLanes fed each probe's bit index rather than the
// values' hashes: idx[i*k+j] is the index of probe j of the ith value.
func runLanesIdx(p Prober, ls []lane, idx []uint32, k int, bits *bitarray.Array, put bool) {
	n, m := len(idx)/k, len(ls)
	for l := range ls {
		ls[l].start(l*n/m, (l+1)*n/m)
		ls[l].issueIdx(idx, k, bits)
	}
	for busy := true; busy; {
		busy = false
		for l := range ls {
			if !ls[l].busy(k) {
				continue
			}
			if put {
				ls[l].set(p, bits)
			} else {
				ls[l].test(bits)
			}
			ls[l].issueIdx(idx, k, bits)
			busy = busy || ls[l].busy(k)
		}
	}
}

// issueIdx is issue fed the probes' bit indexes.
func (l *lane) issueIdx(idx []uint32, k int, bits *bitarray.Array) {
	if !l.busy(k) {
		return
	}
	for t, i := range l.live[:l.n] {
		l.idx[t] = uint64(idx[int(i)*k+l.j])
	}
	bits.Prefetch(l.idx[:l.n])
}

// BenchmarkLockedOr times what a Put pays for each bit it sets, apart from
// finding it: an atomic OR whose result is used, as Set's is (a locked
// compare-and-swap loop on amd64), of words in the first-level cache, one
// after another, with nothing else in the loop but the choice of the word.
func BenchmarkLockedOr(b *testing.B) {
	w := make([]uint64, 64)
	changed := 0
	i := uint64(0)
	for b.Loop() {
		m := uint64(1) << (i >> 6 & 63)
		if atomic.OrUint64(&w[i&63], m)&m == 0 {
			changed++
		}
		i = i*0x9e3779b97f4a7c15 + 1
	}
	sinkInt = changed
}
