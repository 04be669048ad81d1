package redisfilter

import (
	"runtime"
	"sync/atomic"
)

// A changeRing holds the hashes of the values whose local Put changed a bit
// of a Hybrid's filter, for its next Sync to push: so that a Sync sends what
// changed without reading the filter. Writers never wait: a value that
// finds the ring full sets overflow, and the Sync pushes the whole filter.
//
// add is safe for concurrent use; drain is for one goroutine at a time.
type changeRing struct {
	slots    []changeSlot // a power of two of them
	head     atomic.Uint64
	tail     atomic.Uint64 // written by drain only
	overflow atomic.Bool
}

// A changeSlot holds one hash; seq, one more than the slot's position in
// the ring's sequence, publishes it.
type changeSlot struct {
	h1, h2 uint64
	seq    atomic.Uint64
}

// newChangeRing returns a ring of at least n slots.
func newChangeRing(n int) *changeRing {
	size := 1
	for size < n {
		size *= 2
	}
	return &changeRing{slots: make([]changeSlot, size)}
}

// add records the hash (h1, h2).
func (r *changeRing) add(h1, h2 uint64) {
	size := uint64(len(r.slots))
	for {
		i := r.head.Load()
		if i-r.tail.Load() >= size {
			if !r.overflow.Load() {
				r.overflow.Store(true)
			}
			return
		}
		if r.head.CompareAndSwap(i, i+1) {
			s := &r.slots[i&(size-1)]
			s.h1, s.h2 = h1, h2
			s.seq.Store(i + 1)
			return
		}
	}
}

// drain appends to hs the hashes added since the last drain, and reports
// whether some did not fit: the ring overflowed. It waits for the adds in
// progress when it starts, which are a few instructions from done.
func (r *changeRing) drain(hs [][2]uint64) ([][2]uint64, bool) {
	overflowed := r.overflow.Swap(false)
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
