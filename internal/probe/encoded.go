package probe

import "github.com/mitzbloom/mitzbloom/internal/bitarray"

// The lookups of this file are those of probe.go and batch.go for bits in
// Guava's encoding (a [bitarray.Encoded]), such as a filter file mapped
// into memory, which no one writes: the same loops, in the same order, over
// a different load. They are written out again rather than shared through a
// type parameter because Go calls a type parameter's methods through a
// dictionary, an indirect call per bit that the compiler does not inline,
// which would slow the lookups of every filter in memory.

// MightContainEncoded is MightContain for bits in Guava's encoding.
func (p Prober) MightContainEncoded(h1, h2 uint64, k int, bits *bitarray.Encoded) bool {
	i := 0
	if p.mitz32 {
		c := NewMitz32(h1)
		for ; i+1 < k; i += 2 {
			if bits.Bit(bits.Reduce(c.Combined(i)))&bits.Bit(bits.Reduce(c.Combined(i+1))) == 0 {
				return false
			}
		}
		return i == k || bits.Get(bits.Reduce(c.Combined(i)))
	}
	c := Mitz64{h1, h2}
	for ; i+1 < k; i += 2 {
		if bits.Bit(bits.Reduce(c.Combined(i)))&bits.Bit(bits.Reduce(c.Combined(i+1))) == 0 {
			return false
		}
	}
	return i == k || bits.Get(bits.Reduce(c.Combined(i)))
}

// MightContainManyEncoded is MightContainMany for bits in Guava's
// encoding: out[i] is set to what MightContainEncoded would report for
// hs[i]; hs holds at most BatchSize hashes and out is at least as long.
func (p Prober) MightContainManyEncoded(hs []Hash, k int, bits *bitarray.Encoded, out []bool) {
	if bits.WordCount() < prefetchMinWords {
		for len(hs) > 0 {
			m := min(len(hs), smallBatch)
			p.mightContainSmallEncoded(hs[:m], k, bits, out)
			hs, out = hs[m:], out[m:]
		}
		return
	}
	var ls [nLanes]lane
	n, m := len(hs), len(ls)
	for l := range ls {
		ls[l].start(l*n/m, (l+1)*n/m)
		ls[l].issueEncoded(p, hs, k, bits)
	}
	for busy := true; busy; {
		busy = false
		for l := range ls {
			if !ls[l].busy(k) {
				continue
			}
			ls[l].testEncoded(bits)
			ls[l].issueEncoded(p, hs, k, bits)
			busy = busy || ls[l].busy(k)
		}
	}
	clear(out[:len(hs)])
	for l := range ls {
		for _, i := range ls[l].live[:ls[l].n] {
			out[i] = true
		}
	}
}

// issueEncoded is issue for bits in Guava's encoding.
func (l *lane) issueEncoded(p Prober, hs []Hash, k int, bits *bitarray.Encoded) {
	if !l.busy(k) {
		return
	}
	for t, i := range l.live[:l.n] {
		l.idx[t] = bits.Reduce(p.combined(hs[i], l.j))
	}
	bits.Prefetch(l.idx[:l.n])
}

// testEncoded is test for bits in Guava's encoding.
func (l *lane) testEncoded(bits *bitarray.Encoded) {
	m := 0
	for t, i := range l.live[:l.n] {
		l.live[m] = i
		m += int(bits.Bit(l.idx[t]))
	}
	l.n = m
	l.j++
}

// mightContainSmallEncoded is mightContainSmall for bits in Guava's
// encoding.
func (p Prober) mightContainSmallEncoded(hs []Hash, k int, bits *bitarray.Encoded, out []bool) {
	alive := uint64(1)<<len(hs) - 1
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
