package raw

import (
	"github.com/mitzbloom/mitzbloom/bloom/internal/hashing"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/probe"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// A Hash is the Murmur3-128 hash of a value as two halves, H1 and H2, the
// h1 and h2 that [Sum128] returns. Batches of hashes travel as []Hash, as
// in [PutHashes].
type Hash struct{ H1, H2 uint64 }

// A Hasher computes Sum128 for the values of one funnel. The Hashers that
// [HasherFor] returns are safe for concurrent use, as funnels are.
type Hasher[T any] interface {
	// Sum128 returns the Murmur3-128 hash of the bytes the funnel feeds
	// for v, as [Sum128] does.
	Sum128(v T) (h1, h2 uint64)
}

// Sum128 returns the Murmur3-128 hash (seed 0) of the bytes f feeds for v,
// which is Guava's Hashing.murmur3_128().hashObject(v, f): h1 is what
// HashCode.asLong returns, and h2 the second half. A filter's strategy maps
// the two halves to bit indexes (see [AppendIndexes]). With a Funnel that
// does not retain the Sink, Sum128 does not allocate. To hash many values
// with one funnel, [HasherFor] is faster.
func Sum128[T any](f funnel.Funnel[T], v T) (h1, h2 uint64) {
	return hashing.Sum128(f, v)
}

// HasherFor returns a Hasher that computes Sum128(f, v). It inspects f once,
// so each call is cheaper than Sum128's. The built-in funnels, named or not,
// hash a value directly, without a Sink; any other funnel is hashed through
// a pooled buffer.
func HasherFor[T any](f funnel.Funnel[T]) Hasher[T] {
	return hashing.For(f)
}

// AppendIndexes appends to dst the k bit indexes that strategy s selects for
// the hash (h1, h2) of a value in a filter of bitSize bits, in the order
// Guava probes them, and returns the extended slice. h1 and h2 are what
// [Sum128] returns. Indexes may repeat. bitSize must be > 0.
func AppendIndexes(dst []int64, s strategy.Strategy, h1, h2 uint64, k int, bitSize int64) []int64 {
	if s == strategy.Murmur128Mitz32 {
		p := probe.NewMitz32(h1)
		for i := range k {
			dst = append(dst, int64(p.Combined(i)%uint64(bitSize)))
		}
		return dst
	}
	p := probe.Mitz64{H1: h1, H2: h2}
	for i := range k {
		dst = append(dst, int64(p.Combined(i)%uint64(bitSize)))
	}
	return dst
}
