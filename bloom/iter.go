package bloom

import (
	"iter"
	"sync"

	"github.com/mitzbloom/mitzbloom/internal/probe"
)

// PutSeq puts every value that seq yields in f, leaving the same bits set
// as [Filter.PutMany] of them all, without collecting them: it hashes the
// values as they come and puts them a batch at a time, as PutMany does, at
// PutMany's speed on a filter larger than the CPU caches and within about
// a tenth of it in them, where the calls of the iterator weigh more
// It is safe for concurrent use like Put. With the
// built-in funnels it allocates nothing per value; ranging over seq costs
// two small allocations per call.
func (f *Filter[T]) PutSeq(seq iter.Seq[T]) { putSeq(f.hash, f, seq) }

// MightContainSeq returns an iterator over the values of seq, each with
// what [Filter.MightContain] reports for it, in seq's order. It looks them
// up a batch at a time, as [Filter.MightContainMany] does, at its speed as
// [Filter.PutSeq] is at PutMany's: it reads up to 128 values of seq ahead
// of what it has yielded, and a batch's
// values are looked up before the first of them is yielded, so a Put in
// the loop's body is seen by the lookups of later batches only. Breaking
// out of the loop stops reading seq. With the built-in funnels it
// allocates nothing per value: each range over the returned sequence
// allocates a buffer of 128 values, and ranging over functions a few small
// objects.
func (f *Filter[T]) MightContainSeq(seq iter.Seq[T]) iter.Seq2[T, bool] {
	return containSeq(f.hash, f, seq)
}

// PutSeq puts every value that seq yields in r, as [Rotating.PutMany] of
// them all would, a batch at a time as seq yields them; it allocates as
// [Filter.PutSeq] does, and panics where Put does.
func (r *Rotating[T]) PutSeq(seq iter.Seq[T]) {
	if r.readOnly {
		r.panicReadOnly()
	}
	putSeq(r.hash, r, seq)
}

// MightContainSeq returns an iterator over the values of seq, each with
// what [Rotating.MightContain] reports for it, looked up a batch at a time
// as [Rotating.MightContainMany] does, ahead of the loop as
// [Filter.MightContainSeq] says.
func (r *Rotating[T]) MightContainSeq(seq iter.Seq[T]) iter.Seq2[T, bool] {
	return containSeq(r.hash, r, seq)
}

// PutSeq puts every value that seq yields in s, as [Scalable.PutMany] of
// them all would, a batch at a time as seq yields them; it allocates as
// [Filter.PutSeq] does, and panics where Put does.
func (s *Scalable[T]) PutSeq(seq iter.Seq[T]) {
	if s.readOnly {
		s.panicReadOnly()
	}
	putSeq(s.hash, s, seq)
}

// MightContainSeq returns an iterator over the values of seq, each with
// what [Scalable.MightContain] reports for it, looked up a batch at a time
// as [Scalable.MightContainMany] does, ahead of the loop as
// [Filter.MightContainSeq] says.
func (s *Scalable[T]) MightContainSeq(seq iter.Seq[T]) iter.Seq2[T, bool] {
	return containSeq(s.hash, s, seq)
}

// A batcher puts or looks up the values of up to probe.BatchSize hashes at
// once: a Filter, Rotating or Scalable, whose PutMany and MightContainMany
// do so for each batch of a slice.
type batcher interface {
	putBatch(hs []probe.Hash)
	containBatch(hs []probe.Hash, out []bool)
}

// A hasher hashes the values of one funnel, as a filter's does.
type hasher[T any] interface {
	Sum128(v T) (h1, h2 uint64)
}

// hashBatches holds the buffers of putSeq. Ranging over a sequence hands
// the loop's body to the sequence as a closure, so a batch on putSeq's
// stack would move to the heap at every call.
var hashBatches = sync.Pool{New: func() any { return new(hashBatch) }}

// A hashBatch is the hashes of the values read so far of a batch.
type hashBatch struct {
	hs [probe.BatchSize]probe.Hash
	n  int
}

// putSeq puts the values of seq in b, hashed by h, a batch at a time.
func putSeq[T any](h hasher[T], b batcher, seq iter.Seq[T]) {
	hb := hashBatches.Get().(*hashBatch)
	hb.n = 0
	for v := range seq {
		hb.hs[hb.n].H1, hb.hs[hb.n].H2 = h.Sum128(v)
		if hb.n++; hb.n == len(hb.hs) {
			b.putBatch(hb.hs[:])
			hb.n = 0
		}
	}
	b.putBatch(hb.hs[:hb.n])
	hashBatches.Put(hb)
}

// lookups is the buffer of one iteration of containSeq's sequence: the
// values read ahead, their hashes and their answers.
type lookups[T any] struct {
	vs    [probe.BatchSize]T
	hs    [probe.BatchSize]probe.Hash
	found [probe.BatchSize]bool
	n     int
}

// containSeq returns a sequence of the values of seq, each with whether b
// might contain it, looked up a batch at a time.
func containSeq[T any](h hasher[T], b batcher, seq iter.Seq[T]) iter.Seq2[T, bool] {
	return func(yield func(T, bool) bool) {
		l := new(lookups[T])
		for v := range seq {
			l.vs[l.n] = v
			l.hs[l.n].H1, l.hs[l.n].H2 = h.Sum128(v)
			if l.n++; l.n == len(l.vs) && !l.flush(b, yield) {
				return
			}
		}
		l.flush(b, yield)
	}
}

// flush looks up the values read, yields them with their answers, and
// reports whether the loop wants more.
func (l *lookups[T]) flush(b batcher, yield func(T, bool) bool) bool {
	b.containBatch(l.hs[:l.n], l.found[:l.n])
	for i := range l.n {
		if !yield(l.vs[i], l.found[i]) {
			return false
		}
	}
	clear(l.vs[:l.n]) // hold no values for the garbage collector
	l.n = 0
	return true
}
