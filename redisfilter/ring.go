package redisfilter

import (
	"runtime"
	"sync/atomic"
)

// changeRings holds the hashes of the values whose local Put changed a bit
// of a Hybrid's filter, for its next Sync to push: so that a Sync sends what
// changed without reading the filter. Writers never wait: a value that
// finds its ring full sets overflow, and the Sync pushes the whole filter.
// A value goes to one of several rings by its hash, so that the cores
// putting values at once mostly move different rings' counters.
//
// A Put records its value's hash before it sets the value's bits (see
// Hybrid.Put), so that a value whose bits another goroutine finds set is
// recorded, or pushed, by the time that goroutine's Put returns: its next
// Sync pushes both. A value that finds its ring full is counted as
// overflowing while it sets its bits, and sets overflow once they are set,
// so that a Sync that starts meanwhile, or after, pushes the whole filter
// with them.
//
// record and settle are safe for concurrent use; drain is for one
// goroutine at a time.
type changeRings [ringCount]changeRing

// ringCount is the number of rings, a power of two.
const ringCount = 8

// A changeRing is one ring of changeRings.
type changeRing struct {
	head     atomic.Uint64
	_        [56]byte      // head alone in its cache line, which every add moves
	tail     atomic.Uint64 // written by drain only
	overflow atomic.Bool
	// overflowing counts the Puts that found the ring full and are
	// setting their bits.
	overflowing atomic.Int64
	slots       []changeSlot // a power of two of them
}

// A changeSlot holds one hash; seq, one more than the slot's position in
// the ring's sequence, publishes it.
type changeSlot struct {
	h1, h2 uint64
	seq    atomic.Uint64
}

// newChangeRings returns rings of at least n slots in all.
func newChangeRings(n int) *changeRings {
	size := 1
	for size*ringCount < n {
		size *= 2
	}
	var rs changeRings
	for i := range rs {
		rs[i].slots = make([]changeSlot, size)
	}
	return &rs
}

// record records the hash (h1, h2) of a value that a Put is about to
// set, before it sets it. If the value's ring is full, it returns that
// ring, whose settle the Put must call once the value's bits are set.
func (rs *changeRings) record(h1, h2 uint64) *changeRing {
	r := &rs[h2%ringCount]
	if r.add(h1, h2) {
		return nil
	}
	r.overflowing.Add(1)
	return r
}

// settle ends the Put of a value that found r full: its bits are set, and
// the next Sync pushes the whole filter.
func (r *changeRing) settle() {
	r.overflow.Store(true)
	r.overflowing.Add(-1)
}

// drain appends to hs the hashes added since the last drain, and reports
// whether some did not fit: a ring overflowed.
func (rs *changeRings) drain(hs [][2]uint64) ([][2]uint64, bool) {
	overflowed := false
	for i := range rs {
		var o bool
		hs, o = rs[i].drain(hs)
		overflowed = overflowed || o
	}
	return hs, overflowed
}

// add adds the hash (h1, h2) to r, and reports false, having added
// nothing, if r is full.
func (r *changeRing) add(h1, h2 uint64) bool {
	size := uint64(len(r.slots))
	for {
		// tail first: read after head, it could have passed that head,
		// and the difference would wrap around.
		tail := r.tail.Load()
		i := r.head.Load()
		if i-tail >= size {
			if r.tail.Load() != tail {
				continue // a drain made room meanwhile
			}
			return false
		}
		if r.head.CompareAndSwap(i, i+1) {
			s := &r.slots[i&(size-1)]
			s.h1, s.h2 = h1, h2
			s.seq.Store(i + 1)
			return true
		}
	}
}

// drain appends to hs the hashes added to r since the last drain, and
// reports whether some did not fit, or are being set. It waits for the
// adds in progress when it starts, which are a few instructions from done.
func (r *changeRing) drain(hs [][2]uint64) ([][2]uint64, bool) {
	overflowed := r.overflow.Swap(false) || r.overflowing.Load() > 0
	head := r.head.Load()
	size := uint64(len(r.slots))
	for i := r.tail.Load(); i < head; i++ {
		s := &r.slots[i&(size-1)]
		for s.seq.Load() != i+1 {
			runtime.Gosched()
		}
		hs = append(hs, [2]uint64{s.h1, s.h2})
	}
	r.tail.Store(head)
	return hs, overflowed
}
