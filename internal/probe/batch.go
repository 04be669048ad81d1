package probe

import (
	"math/bits"

	"github.com/mitzbloom/mitzbloom/internal/bitarray"
)

// BatchSize is the most hashes PutMany, MightContainMany and Prefetch take
// at once. On a filter larger than the caches a batch's probes are
// prefetched round by round, in lanes of laneSize values, so a round keeps
// many misses in flight, more than the 20 or so a core tracks. The larger
// the batch, the more values share the rounds' last few misses, which wait
// alone: of the batches BenchmarkBatch compares at 1e8 keys, 128 took
// absent values a quarter less time than 64, with present values and puts
// within noise, and 256 was no faster (bench/results/choices.md). A
// lane's values are uint8 indexes into its batch, so BatchSize is at most
// 256.
const BatchSize = 128

// laneSize is the most values a lane holds. A lane issues its round's
// prefetches together and then waits for them all: past about 20, a core's
// count of misses in flight, the last prefetches of a round wait for the
// first, and lanes of 32 or 64 took a present value's lookup and a put
// about 1.6 and 1.3 times as long as lanes of 16, whatever the batch. Of the
// batches in lanes of 16 or fewer that BenchmarkLanesPaired takes in turn,
// 128 in eight lanes of 16 was the fastest for absent values and within 5%
// of the fastest for present ones and puts (8 lanes of 8, which an absent
// value took 10% longer in) (bench/results/choices.md, "Lanes of 16").
const laneSize = 16

// nLanes is the number of lanes a full batch goes in.
const nLanes = BatchSize / laneSize

// smallBatch is the batch of the loops that probe an array in the caches,
// whose alive set is a 64-bit mask.
const smallBatch = 32

// A Hash is the Murmur3-128 hash of one value, in the two halves that
// Guava's strategies take.
type Hash struct{ H1, H2 uint64 }

// combined returns the combined hash of round j for the value hashed to h.
// Probes compute it from the round, so the batch calls keep no probe state
// of their own.
func (p Prober) combined(h Hash, j int) uint64 {
	if p.mitz32 {
		return NewMitz32(h.H1).Combined(j)
	}
	return Mitz64(h).Combined(j)
}

// prefetchMinWords is the smallest array, in words, whose batch probes are
// prefetched: 8 MB, past the L2 caches of current cores, where a probe
// misses more often than not. A smaller array is left to the caches, and
// the batch calls there run as they did before prefetching was added, so
// that prefetches that hit cost nothing.
const prefetchMinWords = 8 << 20 / 8

// Prefetches reports whether the batch calls prefetch their probes in bits.
func Prefetches(bits *bitarray.Array) bool { return bits.WordCount() >= prefetchMinWords }

// Prefetch starts loading every word that the k probes of each of hs read,
// when bits is large enough to miss the caches (see [Prefetches]), and
// does nothing otherwise. hs holds at most BatchSize hashes. It is for
// callers that must then probe value by value, as a Rotating's PutMany
// counts its values.
//
// A software prefetch is retired before its line arrives, where a load waits
// in the reorder buffer, so a prefetch loop keeps as many misses in flight
// as the core can track, more than a loop of loads whose answers are
// needed.
func (p Prober) Prefetch(hs []Hash, k int, bits *bitarray.Array) {
	if !Prefetches(bits) {
		return
	}
	var idx [BatchSize]uint64
	for j := range k {
		for i := range hs {
			idx[i] = bits.Reduce(p.combined(hs[i], j))
		}
		bits.Prefetch(idx[:len(hs)])
	}
}

// PutMany does what Put does for each of hs, which holds at most BatchSize
// hashes, and leaves the same bits set.
//
// On a large array it works round by round, the jth bit of every value in
// turn, in lanes as MightContainMany does: a lane's round is prefetched,
// and while the other lanes' prefetches are in flight its words are read
// and the bits that were clear are set, in words that are in the cache by
// then. With atomic writes that order matters most: an atomic OR
// waits for every load before it, so interleaving ORs with the loads of a
// round would serialize the misses that dominate the cost of a filter
// larger than the caches.
func (p Prober) PutMany(hs []Hash, k int, bits *bitarray.Array) {
	if Prefetches(bits) {
		var ls [nLanes]lane
		p.runLanes(ls[:], hs, k, bits, true)
		return
	}
	if !p.plain {
		for _, h := range hs {
			put(p.mitz32, false, h.H1, h.H2, k, bits)
		}
		return
	}
	// Plain writes, round by round: nothing orders one value's probes after
	// another's, and the CPU overlaps a round's accesses on its own.
	for len(hs) > 0 {
		b := hs[:min(len(hs), smallBatch)]
		for j := range k {
			for i := range b {
				bits.SetPlain(bits.Reduce(p.combined(b[i], j)))
			}
		}
		hs = hs[len(b):]
	}
}

// MightContainMany sets out[i] to what MightContain would report for hs[i];
// hs holds at most BatchSize hashes and out is at least as long.
//
// It works round by round, the jth bit of every value still alive, so that
// the loads of different values overlap, and a value leaves the rounds at
// its first clear bit. On a large array the batch goes in lanes of up to
// laneSize values: a lane's round is prefetched, and its bits are tested
// while the other lanes' prefetches are in flight, so that the core always
// has misses outstanding instead of waiting for the last of a round's. The
// values still alive are kept in a list updated without branches: on a
// full filter a bit is set or not about as often, so a branch on it is
// mispredicted half the time.
func (p Prober) MightContainMany(hs []Hash, k int, bits *bitarray.Array, out []bool) {
	if !Prefetches(bits) {
		for len(hs) > 0 {
			m := min(len(hs), smallBatch)
			p.mightContainSmall(hs[:m], k, bits, out)
			hs, out = hs[m:], out[m:]
		}
		return
	}
	p.MightContainManyPrefetched(hs, k, bits, out)
}

// MightContainManyPrefetched is MightContainMany with the prefetches of a
// large array whatever the size of bits, for a caller that knows the array
// to miss the caches though it is smaller than the threshold of
// [Prefetches]: one of many that take turns, such as a bloom.Scalable's
// older stages, which together outgrow the caches one alone fits.
func (p Prober) MightContainManyPrefetched(hs []Hash, k int, bits *bitarray.Array, out []bool) {
	var ls [nLanes]lane
	p.runLanes(ls[:], hs, k, bits, false)
	clear(out[:len(hs)])
	for l := range ls {
		for _, i := range ls[l].live[:ls[l].n] {
			out[i] = true
		}
	}
}

// runLanes splits hs evenly among the lanes ls, each of which holds
// len(hs)/len(ls) values or one more, at most laneSize, and takes them
// through their k rounds in turn, each lane's round tested while the
// others' prefetches are in flight. With put set, a round sets the bits
// that were clear; otherwise it keeps the values whose bit is set, and
// those alive at the end are the ones all of whose bits are.
func (p Prober) runLanes(ls []lane, hs []Hash, k int, bits *bitarray.Array, put bool) {
	n, m := len(hs), len(ls)
	for l := range ls {
		ls[l].start(l*n/m, (l+1)*n/m)
		ls[l].issue(p, hs, k, bits)
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
			ls[l].issue(p, hs, k, bits)
			busy = busy || ls[l].busy(k)
		}
	}
}

// A lane is a part of a batch that MightContainMany or PutMany probes:
// the values still alive, the words of their current round and that
// round's number.
type lane struct {
	live [laneSize]uint8
	idx  [laneSize]uint64
	n, j int
}

// start makes the values [lo, hi) of the batch l's, all alive, at round 0.
func (l *lane) start(lo, hi int) {
	for i := lo; i < hi; i++ {
		l.live[i-lo] = uint8(i)
	}
	l.n, l.j = hi-lo, 0
}

// busy reports whether l has a round left to test.
func (l *lane) busy(k int) bool { return l.j < k && l.n > 0 }

// issue computes and prefetches the words of round l.j of l's live values,
// if l has that round.
func (l *lane) issue(p Prober, hs []Hash, k int, bits *bitarray.Array) {
	if !l.busy(k) {
		return
	}
	for t, i := range l.live[:l.n] {
		l.idx[t] = bits.Reduce(p.combined(hs[i], l.j))
	}
	bits.Prefetch(l.idx[:l.n])
}

// set sets the bits of round l.j that were clear and moves l to the next
// round; the values stay alive, as every one of them has k rounds.
func (l *lane) set(p Prober, bits *bitarray.Array) {
	c := 0 // idx[:c] holds the bits that were clear
	for _, x := range l.idx[:l.n] {
		l.idx[c] = x
		c += int(bits.Bit(x) ^ 1)
	}
	for _, x := range l.idx[:c] {
		if p.plain {
			bits.SetPlain(x)
		} else {
			bits.Set(x)
		}
	}
	l.j++
}

// test keeps the values whose bit of round l.j is set and moves l to the
// next round.
func (l *lane) test(bits *bitarray.Array) {
	m := 0
	for t, i := range l.live[:l.n] {
		l.live[m] = i
		m += int(bits.Bit(l.idx[t]))
	}
	l.n = m
	l.j++
}

// mightContainSmall is MightContainMany for at most smallBatch hashes in an
// array that the caches hold.
func (p Prober) mightContainSmall(hs []Hash, k int, bits *bitarray.Array, out []bool) {
	alive := uint64(1)<<len(hs) - 1 // bit i: value i's bits were set so far
	for j := 0; j < k && alive != 0; j++ {
		for m := alive; m != 0; m &= m - 1 {
			i := trailingZeros(m)
			if !bits.Get(bits.Reduce(p.combined(hs[i], j))) {
				alive &^= 1 << i
			}
		}
	}
	for i := range hs {
		out[i] = alive>>i&1 != 0
	}
}

func trailingZeros(x uint64) int { return bits.TrailingZeros64(x) }
