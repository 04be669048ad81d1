package funnel

import (
	"sync"

	"github.com/mitzbloom/mitzbloom/internal/murmur3"
	"github.com/mitzbloom/mitzbloom/internal/sinkbuf"
)

// maxPooledBuffer is the largest buffer kept for reuse, so that one huge key
// does not pin its memory for the life of the process.
const maxPooledBuffer = 64 << 10

// buffers holds the sinks values are encoded into. A Sink passed to a Funnel
// through an interface escapes, so a buffer on the stack would be moved to
// the heap on every call; a pooled buffer already lives there, and hashing
// stays allocation-free for any funnel.
var buffers = sync.Pool{New: func() any { return new(sinkbuf.Buffer) }}

// A Hash is the Murmur3-128 hash of a value as two halves, H1 and H2, the
// h1 and h2 that [Sum128] returns. Batches of hashes travel as []Hash, as
// in the PutHashes method of package bloom's Filter.
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
// the two halves to bit indexes (see strategy.Strategy's AppendIndexes).
// With a Funnel that does not retain the Sink, Sum128 does not allocate. To
// hash many values with one funnel, [HasherFor] is faster.
func Sum128[T any](f Funnel[T], v T) (h1, h2 uint64) {
	// Not HasherFor(f).Sum128(v): boxing buffered in a Hasher would
	// allocate on every call.
	if h, ok := builtinHasher(f); ok {
		return h.Sum128(v)
	}
	return buffered[T]{f}.Sum128(v)
}

// HasherFor returns a Hasher that computes Sum128(f, v). It inspects f once,
// so each call is cheaper than Sum128's. The built-in funnels, named or not,
// hash a value directly, without a Sink; any other funnel is hashed through
// a pooled buffer.
func HasherFor[T any](f Funnel[T]) Hasher[T] {
	if h, ok := builtinHasher(f); ok {
		return h
	}
	return buffered[T]{f}
}

// direct is what the built-in funnels that hash a value directly implement.
// The unexported method keeps other types out: their Sum128 methods, if
// any, are not trusted to hash what their Funnel methods feed.
type direct[T any] interface {
	Hasher[T]
	isBuiltin()
}

// builtinHasher returns f, or the funnel a Named funnel wraps, as a Hasher
// if it is a built-in funnel with a direct hash.
func builtinHasher[T any](f Funnel[T]) (Hasher[T], bool) {
	if n, ok := f.(named[T]); ok {
		f = n.f
	}
	h, ok := f.(direct[T])
	return h, ok
}

// buffered hashes what a funnel feeds into a pooled buffer.
type buffered[T any] struct{ f Funnel[T] }

func (b buffered[T]) Sum128(v T) (h1, h2 uint64) {
	buf := buffers.Get().(*sinkbuf.Buffer)
	buf.Reset()
	b.f.Funnel(v, buf)
	h1, h2 = murmur3.Sum128(buf.Bytes())
	if buf.Len() <= maxPooledBuffer {
		buffers.Put(buf)
	}
	return h1, h2
}
