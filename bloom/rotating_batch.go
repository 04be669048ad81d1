package bloom

import (
	"slices"

	"github.com/mitzbloom/mitzbloom/internal/probe"
)

// PutMany puts every value of vs in r, as calling [Rotating.Put] for each
// in turn would, counting them toward filling the current generation in the
// same way. It is faster than that loop on generations larger than the CPU
// caches, as [Filter.PutMany] is: it starts loading the memory of many
// values at once before it puts them one by one. PutMany is safe for
// concurrent use like Put, and panics where Put does.
func (r *Rotating[T]) PutMany(vs []T) {
	if r.readOnly {
		r.panicReadOnly()
	}
	var hs [probe.BatchSize]probe.Hash
	for len(vs) > 0 {
		n := min(len(vs), len(hs))
		hashAll(r.hash, hs[:n], vs)
		r.putBatch(hs[:n])
		vs = vs[n:]
	}
}

// putBatch puts the values whose hashes are hs, at most probe.BatchSize of
// them, as PutMany does.
func (r *Rotating[T]) putBatch(hs []probe.Hash) {
	cur := r.gens.Load().cur.f
	cur.probe.Prefetch(hs, cur.k, cur.bits)
	for _, h := range hs {
		// Put without its answer, which needs a look at the previous
		// generation.
		g := r.gens.Load()
		r.putIn(g, h.H1, h.H2)
		r.settle(g, h.H1, h.H2)
	}
}

// MightContainMany appends to dst, for each value of vs in order, what
// [Rotating.MightContain] would report for it, and returns the extended
// slice. Like [Filter.MightContainMany] it overlaps the memory reads of
// many values, in the current generation and then, for the values it does
// not hold, in the previous one. With the built-in funnels it allocates
// only to grow dst.
func (r *Rotating[T]) MightContainMany(dst []bool, vs []T) []bool {
	dst = slices.Grow(dst, len(vs))
	var hs [probe.BatchSize]probe.Hash
	for len(vs) > 0 {
		n := min(len(vs), len(hs))
		hashAll(r.hash, hs[:n], vs)
		r.containBatch(hs[:n], dst[len(dst):len(dst)+n])
		dst = dst[:len(dst)+n]
		vs = vs[n:]
	}
	return dst
}

// containBatch sets out[i] to what MightContain reports for the value whose
// hash is hs[i], for each of hs, which holds at most probe.BatchSize
// hashes.
func (r *Rotating[T]) containBatch(hs []probe.Hash, out []bool) {
	// One arrangement of the generations for the batch, as MightContain
	// uses one for its value.
	g := r.gens.Load()
	cur, prev := g.cur.f, g.prev.f
	cur.probe.MightContainMany(hs, cur.k, cur.bits, out)
	if !probe.Prefetches(prev.bits) {
		// In the caches, where a lookup waits for no miss, one at a time
		// is cheaper than gathering the values for a batch
		// (BenchmarkRotatingMightContainMany).
		for i, h := range hs {
			out[i] = out[i] || g.prev.has(h.H1, h.H2)
		}
		return
	}
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
	prev.probe.MightContainMany(rest[:m], prev.k, prev.bits, found[:m])
	for t, ok := range found[:m] {
		out[at[t]] = ok
	}
}
