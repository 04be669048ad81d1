// Package hashing computes Guava's hash of a value: Murmur3-128 (seed 0)
// of the bytes a funnel feeds, as Hashing.murmur3_128().hashObject(v,
// funnel) does. The built-in funnels hash a value directly, without a
// Sink; any other funnel is hashed through a pooled buffer.
package hashing

import (
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/direct"
	"github.com/mitzbloom/mitzbloom/internal/murmur3"
	"github.com/mitzbloom/mitzbloom/internal/sinkbuf"
)

// A Hasher computes Sum128 for the values of one funnel. The Hashers that
// For returns are safe for concurrent use, as funnels are.
type Hasher[T any] interface {
	Sum128(v T) (h1, h2 uint64)
}

// Sum128 returns the hash of the bytes f feeds for v: h1 is what Guava's
// HashCode.asLong returns, and h2 the second half. With a Funnel that does
// not retain the Sink, Sum128 does not allocate.
func Sum128[T any](f funnel.Funnel[T], v T) (h1, h2 uint64) {
	// Not For(f).Sum128(v): boxing buffered in a Hasher would allocate on
	// every call.
	if h, ok := direct.Of(f).(Hasher[T]); ok {
		return h.Sum128(v)
	}
	return buffered[T]{f}.Sum128(v)
}

// For returns a Hasher that computes Sum128(f, v). It inspects f once, so
// each call is cheaper than Sum128's.
func For[T any](f funnel.Funnel[T]) Hasher[T] {
	if h, ok := direct.Of(f).(Hasher[T]); ok {
		return h
	}
	return buffered[T]{f}
}

// buffered hashes what a funnel feeds into a pooled buffer.
type buffered[T any] struct{ f funnel.Funnel[T] }

func (b buffered[T]) Sum128(v T) (h1, h2 uint64) {
	buf := sinkbuf.Get()
	b.f.Funnel(v, buf)
	h1, h2 = murmur3.Sum128(buf.Bytes())
	buf.Release()
	return h1, h2
}
