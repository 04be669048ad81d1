// Package probe sets and tests the bits that Guava's strategies select for a
// hash: the per-bit loops under a filter's Put and MightContain and their
// batch forms. The index arithmetic of both strategies lives here, so that
// package strategy's index sequences and a filter's probes cannot disagree.
package probe

import (
	"math"
	mathbits "math/bits"

	"github.com/mitzbloom/mitzbloom/internal/bitarray"
)

// A Prober sets and tests the bits a strategy selects for a hash. It is a
// struct rather than an interface so that calls are direct and the batch
// methods' arguments can stay on the caller's stack.
type Prober struct {
	mitz32 bool
	plain  bool // set bits with SetPlain rather than Set
}

// For returns the Prober of MURMUR128_MITZ_32 when mitz32 is set, and of
// MURMUR128_MITZ_64 otherwise. With plain set, its Put and PutMany set bits
// with [bitarray.Array.SetPlain], for an array that no other goroutine uses
// while they run.
func For(mitz32, plain bool) Prober {
	return Prober{mitz32: mitz32, plain: plain}
}

// Plain reports whether p sets bits with plain writes.
func (p Prober) Plain() bool { return p.plain }

// Put sets the k bits that the hash (h1, h2) selects and reports whether any
// of them changed.
func (p Prober) Put(h1, h2 uint64, k int, bits *bitarray.Array) bool {
	return put(p.mitz32, p.plain, h1, h2, k, bits)
}

// MightContain reports whether all k bits that (h1, h2) selects are set.
func (p Prober) MightContain(h1, h2 uint64, k int, bits *bitarray.Array) bool {
	return mightContain(p.mitz32, h1, h2, k, bits)
}

// put and mightContain hold both strategies' loops, so that the Prober
// methods, a single call each, inline into the filter's. The branches on
// plain and on k go the same way for every value of a filter, so they are
// predicted and cost next to nothing; a helper holding them would be too
// large to inline.
//
// An atomic OR is a locked instruction, which waits for every load before
// it: a loop that loads a word and ORs it before loading the next takes a
// filter's k cache misses one after another, and its branch on each bit,
// set or clear about as often for a new value, is mispredicted half the
// time. On an array in the caches (below the size from which the batch
// calls prefetch), put therefore first looks the value up in pairs, as
// mightContain does, so that a value already present, the common case in
// a filter that is filling up, costs what a lookup costs; a new value
// leaves the pairs at its first pair with a clear bit and loads the words
// from there on with no branch between the loads, gathering the probes
// whose bit is clear in a mask, probe i at bit k−1−i (shifting the mask
// one place a probe costs less than a shift by i). Only then a second pass
// computes the indexes of the clear probes again (a multiply-add and a
// reduction each, cheaper than keeping them) and sets them, in words that
// are in the cache by then, with one mispredicted branch, where the loop
// of one pass had half of k. Set loads the word again and reports what its
// atomic OR changed, so a bit that another goroutine set meanwhile is not
// counted as changed by this call.
//
// Past the caches the loop of one pass stays: filling a new filter there,
// the two passes took longer than one (BenchmarkPutNew in package bloom,
// at 1e7 keys), though on an array already written they took less
// (BenchmarkPutNew here). Plain writes wait for nothing and keep the loop
// of one pass too, as does a k above 64, which the mask cannot hold.
// bench/results/choices.md has the figures.
func put(mitz32, plain bool, h1, h2 uint64, k int, bits *bitarray.Array) bool {
	if plain || k > 64 || bits.WordCount() >= prefetchMinWords {
		return putEach(mitz32, plain, h1, h2, k, bits)
	}
	clear := uint64(0)
	changed := false
	i := 0 // the probes before i are set
	if mitz32 {
		p := NewMitz32(h1)
		for ; i+1 < k; i += 2 {
			if bits.Bit(bits.Reduce(p.Combined(i)))&bits.Bit(bits.Reduce(p.Combined(i+1))) == 0 {
				break
			}
		}
		if i+1 >= k && (i == k || bits.Get(bits.Reduce(p.Combined(i)))) {
			return false
		}
		for ; i < k; i++ {
			clear = clear<<1 | (bits.Bit(bits.Reduce(p.Combined(i))) ^ 1)
		}
		for ; clear != 0; clear &= clear - 1 {
			changed = bits.Set(bits.Reduce(p.Combined(k-1-mathbits.TrailingZeros64(clear)))) || changed
		}
		return changed
	}
	p := Mitz64{h1, h2}
	for ; i+1 < k; i += 2 {
		if bits.Bit(bits.Reduce(p.Combined(i)))&bits.Bit(bits.Reduce(p.Combined(i+1))) == 0 {
			break
		}
	}
	if i+1 >= k && (i == k || bits.Get(bits.Reduce(p.Combined(i)))) {
		return false
	}
	for ; i < k; i++ {
		clear = clear<<1 | (bits.Bit(bits.Reduce(p.Combined(i))) ^ 1)
	}
	for ; clear != 0; clear &= clear - 1 {
		changed = bits.Set(bits.Reduce(p.Combined(k-1-mathbits.TrailingZeros64(clear)))) || changed
	}
	return changed
}

// putEach sets the k bits one after another, each read and then written.
func putEach(mitz32, plain bool, h1, h2 uint64, k int, bits *bitarray.Array) bool {
	changed := false
	if mitz32 {
		p := NewMitz32(h1)
		for i := range k {
			if x := bits.Reduce(p.Combined(i)); plain {
				changed = bits.SetPlain(x) || changed
			} else {
				changed = bits.Set(x) || changed
			}
		}
		return changed
	}
	p := Mitz64{h1, h2}
	for i := range k {
		if x := bits.Reduce(p.Combined(i)); plain {
			changed = bits.SetPlain(x) || changed
		} else {
			changed = bits.Set(x) || changed
		}
	}
	return changed
}

// mightContain tests the bits two at a time, with one branch per pair. On
// a full filter about half the bits are set, so for an absent value a branch
// per bit is a coin toss that the CPU mispredicts about as often as not, and
// a misprediction throws away the work it did past the branch. A pair's two
// loads are issued together, and the pair's branch is better predicted.
// Reading all k bits before a single branch reads k cache lines for every
// value, where an absent one needs about two.
//
// On a filter larger than the caches, a present value's k loads are
// already in flight together: the branch after each pair is predicted to
// go on, so the CPU issues the next pairs' loads before the first ones
// return, and a chained lookup of a present value takes about what k loads
// issued together take. Every other order of the loads that BenchmarkSingle
// compares was slower for present values, and those that prefetch or load
// all k words much slower for absent ones, which are most of what a filter
// answers: a prefetch makes an absent value's lookup wait for k lines where
// it needs about two, and holds miss buffers that the next lookups would
// use. bench/results/choices.md has the figures. MightContainMany
// prefetches.
func mightContain(mitz32 bool, h1, h2 uint64, k int, bits *bitarray.Array) bool {
	i := 0
	if mitz32 {
		p := NewMitz32(h1)
		for ; i+1 < k; i += 2 {
			if bits.Bit(bits.Reduce(p.Combined(i)))&bits.Bit(bits.Reduce(p.Combined(i+1))) == 0 {
				return false
			}
		}
		return i == k || bits.Get(bits.Reduce(p.Combined(i)))
	}
	p := Mitz64{h1, h2}
	for ; i+1 < k; i += 2 {
		if bits.Bit(bits.Reduce(p.Combined(i)))&bits.Bit(bits.Reduce(p.Combined(i+1))) == 0 {
			return false
		}
	}
	return i == k || bits.Get(bits.Reduce(p.Combined(i)))
}

// Mitz64 yields MURMUR128_MITZ_64's combined hashes: the ith (from 0) is
// h1+i·h2 with 64-bit wraparound and its sign bit cleared. Guava adds h2 at
// each step; the product gives the same value and, unlike a running sum,
// leaves no dependency from one probe to the next. The bit index is the
// combined hash modulo the bit size.
type Mitz64 struct {
	H1, H2 uint64
}

// Combined returns the ith combined hash.
func (p Mitz64) Combined(i int) uint64 {
	return (p.H1 + uint64(i)*p.H2) & math.MaxInt64
}

// Mitz32 yields MURMUR128_MITZ_32's combined hashes: with a and b the low
// and high 32 bits of h1, the ith (from 0) is a+(i+1)·b in int32
// arithmetic, as in Guava, complemented (not negated) when negative. The bit
// index is the combined hash modulo the bit size, so indexes never reach
// 2³¹, however large the filter.
type Mitz32 struct {
	a, b int32
}

// NewMitz32 returns the combined hashes of a value whose hash begins with h1.
func NewMitz32(h1 uint64) Mitz32 {
	return Mitz32{a: int32(h1), b: int32(h1 >> 32)}
}

// Combined returns the ith combined hash.
func (p Mitz32) Combined(i int) uint64 {
	c := p.a + int32(i+1)*p.b
	if c < 0 {
		c = ^c
	}
	return uint64(c)
}
