package bloom

import (
	"slices"

	"github.com/mitzbloom/mitzbloom/internal/probe"
)

// PutMany puts every value of vs in s, as calling [Scalable.Put] for each in
// turn would, counting them toward filling the newest stage in the same
// way. Like [Filter.PutMany] it is faster than that loop on stages larger
// than the CPU caches: it looks a batch of values up in every stage as
// [Scalable.MightContainMany] does, then prefetches the newest stage's
// words for the values no stage holds before it puts them one by one.
// PutMany is safe for concurrent use like Put, and panics where Put does.
func (s *Scalable[T]) PutMany(vs []T) {
	if s.readOnly {
		s.panicReadOnly()
	}
	var hs [probe.BatchSize]probe.Hash
	for len(vs) > 0 {
		n := min(len(vs), len(hs))
		hashAll(s.hash, hs[:n], vs)
		s.putBatch(hs[:n])
		vs = vs[n:]
	}
}

// putBatch puts the values whose hashes are hs, at most probe.BatchSize of
// them, as PutMany does.
func (s *Scalable[T]) putBatch(hs []probe.Hash) {
	var absent [probe.BatchSize]probe.Hash
	var found [probe.BatchSize]bool
	l := s.stages.Load()
	l.containMany(hs, found[:len(hs)])
	m := 0
	for i, h := range hs {
		absent[m] = h
		if !found[i] {
			m++
		}
	}
	newest := l.newest().f
	newest.probe.Prefetch(absent[:m], newest.k, newest.bits)
	for _, h := range absent[:m] {
		// The newest stage of the moment: after a stage was added during
		// the batch, the rest go in the new one. A value the batch found
		// in none of l's stages is in none of them still, and the new
		// stage's Put tells whether it is there.
		s.putNewest(s.stages.Load(), h.H1, h.H2)
	}
}

// MightContainMany appends to dst, for each value of vs in order, what
// [Scalable.MightContain] would report for it, and returns the extended
// slice. Like [Filter.MightContainMany] it overlaps the memory reads of
// many values, in the newest stage and then, for the values it does not
// hold, in each older one in turn. With the built-in funnels it allocates
// only to grow dst.
func (s *Scalable[T]) MightContainMany(dst []bool, vs []T) []bool {
	dst = slices.Grow(dst, len(vs))
	var hs [probe.BatchSize]probe.Hash
	for len(vs) > 0 {
		n := min(len(vs), len(hs))
		hashAll(s.hash, hs[:n], vs)
		s.containBatch(hs[:n], dst[len(dst):len(dst)+n])
		dst = dst[:len(dst)+n]
		vs = vs[n:]
	}
	return dst
}

// containBatch sets out[i] to what MightContain reports for the value whose
// hash is hs[i], for each of hs, which holds at most probe.BatchSize
// hashes.
func (s *Scalable[T]) containBatch(hs []probe.Hash, out []bool) {
	// One list of stages for the batch, as MightContain uses one for its
	// value.
	s.stages.Load().containMany(hs, out)
}

// olderPrefetchMinWords is the smallest older stage, in words, whose batch
// lookups are prefetched when the newest stage's are: 256 KB, past the L2
// cache. The stages together are then larger than the caches, so an older
// stage that alone would fit them misses nearly as often as a large one;
// prefetched, its misses overlap. That makes absent values, which are
// looked for in every stage, faster, and present ones, most of which the
// newest stage holds, a little slower.
const olderPrefetchMinWords = 256 << 10 / 8

// containMany sets out[i] to whether any stage of l might contain hs[i],
// which holds at most probe.BatchSize hashes. It asks the newest stage
// about all of them, and each older stage about those that no newer one
// holds.
func (l *stageList[T]) containMany(hs []probe.Hash, out []bool) {
	newest := l.newest().f
	if !probe.Prefetches(newest.bits) {
		// Every stage is in the caches, where a lookup waits for no miss:
		// one value at a time costs less than gathering them for batches.
		for i, h := range hs {
			out[i] = l.contains(h.H1, h.H2)
		}
		return
	}
	newest.probe.MightContainMany(hs, newest.k, newest.bits, out)
	var rest [probe.BatchSize]probe.Hash
	var at [probe.BatchSize]uint8 // rest[t] is hs[at[t]]
	var found [probe.BatchSize]bool
	m := 0
	for i, h := range hs {
		rest[m], at[m] = h, uint8(i)
		if !out[i] {
			m++
		}
	}
	for j := len(l.stages) - 2; j >= 0 && m > 0; j-- {
		f := l.stages[j].f
		if f.bits.WordCount() >= olderPrefetchMinWords {
			f.probe.MightContainManyPrefetched(rest[:m], f.k, f.bits, found[:m])
		} else {
			// In the caches, one at a time, as in Rotating.MightContainMany.
			for t, h := range rest[:m] {
				found[t] = f.probe.MightContain(h.H1, h.H2, f.k, f.bits)
			}
		}
		left := 0
		for t, ok := range found[:m] {
			out[at[t]] = ok
			rest[left], at[left] = rest[t], at[t]
			if !ok {
				left++
			}
		}
		m = left
	}
}
