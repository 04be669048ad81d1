package bloom

import (
	"slices"

	"github.com/mitzbloom/mitzbloom/bloom/internal/hashing"
	"github.com/mitzbloom/mitzbloom/internal/probe"
)

// PutMany puts every value of vs in f, leaving the same bits set as calling
// [Filter.Put] for each in turn. It is faster than that loop on a filter
// larger than the CPU caches: it probes the values a batch at a time,
// round by round, so the cache misses of different values overlap instead
// of following one another. Unlike Put it does not report which values were
// new; use Put for that. PutMany is safe for concurrent use like Put, and
// does not allocate with the built-in funnels.
func (f *Filter[T]) PutMany(vs []T) {
	var hs [probe.BatchSize]probe.Hash
	for len(vs) > 0 {
		n := min(len(vs), len(hs))
		hashAll(f.hash, hs[:n], vs)
		f.putBatch(hs[:n])
		vs = vs[n:]
	}
}

// MightContainMany appends to dst, for each value of vs in order, what
// [Filter.MightContain] would report for it, and returns the extended
// slice. Like PutMany it overlaps the memory reads of many values, and with
// the built-in funnels it allocates only to grow dst, never when dst has
// room for len(vs) more answers.
func (f *Filter[T]) MightContainMany(dst []bool, vs []T) []bool {
	dst = slices.Grow(dst, len(vs))
	var hs [probe.BatchSize]probe.Hash
	for len(vs) > 0 {
		n := min(len(vs), len(hs))
		hashAll(f.hash, hs[:n], vs)
		f.containBatch(hs[:n], dst[len(dst):len(dst)+n])
		dst = dst[:len(dst)+n]
		vs = vs[n:]
	}
	return dst
}

// putBatch puts the values whose hashes are hs, at most probe.BatchSize of
// them.
func (f *Filter[T]) putBatch(hs []probe.Hash) { f.probe.PutMany(hs, f.k, f.bits) }

// containBatch sets out[i] to whether f might contain the value whose hash
// is hs[i], for each of hs, which holds at most probe.BatchSize hashes.
func (f *Filter[T]) containBatch(hs []probe.Hash, out []bool) {
	f.probe.MightContainMany(hs, f.k, f.bits, out)
}

// hashAll sets hs[i] to the hash of vs[i], for every i of hs.
func hashAll[T any](h hashing.Hasher[T], hs []probe.Hash, vs []T) {
	for i := range hs {
		hs[i].H1, hs[i].H2 = h.Sum128(vs[i])
	}
}
