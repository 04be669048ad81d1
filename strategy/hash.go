package strategy

import (
	"sync"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/murmur3"
)

// maxPooledBuffer is the largest buffer kept for reuse, so that one huge key
// does not pin its memory for the life of the process.
const maxPooledBuffer = 64 << 10

// buffers holds the sinks values are encoded into. A Sink passed to a Funnel
// through an interface escapes, so a buffer on the stack would be moved to
// the heap on every call; a pooled buffer already lives there, and hashing
// stays allocation-free for any funnel.
var buffers = sync.Pool{New: func() any { return new(funnel.Buffer) }}

// directHasher is implemented by the built-in funnels, which hash a value
// without feeding a Sink.
type directHasher[T any] interface {
	Sum128(v T) (h1, h2 uint64)
}

// Sum128 returns the Murmur3-128 hash (seed 0) of the bytes f feeds for v,
// which is Guava's Hashing.murmur3_128().hashObject(v, f): h1 is what
// HashCode.asLong returns, and h2 the second half. With a Funnel that does
// not retain the Sink, Sum128 does not allocate. To hash many values with
// one funnel, [HashFunc] is faster.
func Sum128[T any](f funnel.Funnel[T], v T) (h1, h2 uint64) {
	if d, ok := f.(directHasher[T]); ok {
		return d.Sum128(v)
	}
	return sumBuffered(f, v)
}

// HashFunc returns a function that computes Sum128(f, v). It inspects f
// once, so each call is cheaper than Sum128's; for the built-in funnels it
// hashes the value directly, without a Sink.
func HashFunc[T any](f funnel.Funnel[T]) func(v T) (h1, h2 uint64) {
	if d, ok := f.(directHasher[T]); ok {
		return d.Sum128
	}
	return func(v T) (uint64, uint64) { return sumBuffered(f, v) }
}

func sumBuffered[T any](f funnel.Funnel[T], v T) (h1, h2 uint64) {
	b := buffers.Get().(*funnel.Buffer)
	b.Reset()
	f.Funnel(v, b)
	h1, h2 = murmur3.Sum128(b.Bytes())
	if b.Len() <= maxPooledBuffer {
		buffers.Put(b)
	}
	return h1, h2
}
