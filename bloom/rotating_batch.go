package bloom

import (
	"slices"

	"github.com/mitzbloom/mitzbloom/internal/probe"
)

// PutMany puts every value of vs in r, as calling [Rotating.Put] for each
// in turn would, counting them toward filling the current generation in the
// same way. It is there for the callers that have their values in batches,
// as [Filter.PutMany] is; since every value's insert must be counted, it is
// no faster than that loop. PutMany is safe for concurrent use like Put.
func (r *Rotating[T]) PutMany(vs []T) {
	for _, v := range vs {
		g := r.gens.Load()
		h1, h2 := r.hash.Sum128(v)
		r.putHash(g, h1, h2)
	}
}

// MightContainMany appends to dst, for each value of vs in order, what
// [Rotating.MightContain] would report for it, and returns the extended
// slice. Like [Filter.MightContainMany] it overlaps the memory reads of
// many values in the current generation, and then checks the previous one
// for the values it did not hold. With the built-in funnels it allocates
// only to grow dst.
func (r *Rotating[T]) MightContainMany(dst []bool, vs []T) []bool {
	dst = slices.Grow(dst, len(vs))
	var hs [probe.BatchSize]probe.Hash
	for len(vs) > 0 {
		n := min(len(vs), len(hs))
		hashAll(r.hash, hs[:n], vs)
		// One arrangement of the generations for the batch, as
		// MightContain uses one for its value.
		g := r.gens.Load()
		out := dst[len(dst) : len(dst)+n]
		cur := g.cur.f
		cur.probe.MightContainMany(hs[:n], cur.k, cur.bits, out)
		for i, h := range hs[:n] {
			out[i] = out[i] || g.prev.has(h.H1, h.H2)
		}
		dst = dst[:len(dst)+n]
		vs = vs[n:]
	}
	return dst
}
