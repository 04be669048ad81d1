package strategy

import (
	"sync"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/spaolacci/murmur3"
)

// maxPooledBuffer is the largest buffer kept for reuse, so that one huge key
// does not pin its memory for the life of the process.
const maxPooledBuffer = 64 << 10

// buffers holds the sinks values are encoded into. murmur3.Sum128 makes its
// argument escape, so hashing a buffer on the stack would allocate on every
// call; a pooled buffer already lives on the heap, and Put and MightContain
// stay allocation-free for any funnel.
var buffers = sync.Pool{New: func() any { return new(funnel.Buffer) }}

// Sum128 returns the Murmur3-128 hash (seed 0) of the bytes f feeds for v,
// which is Guava's Hashing.murmur3_128().hashObject(v, f): h1 is what
// HashCode.asLong returns, and h2 the second half. With a Funnel that does
// not retain the Sink, Sum128 does not allocate.
func Sum128[T any](f funnel.Funnel[T], v T) (h1, h2 uint64) {
	b := buffers.Get().(*funnel.Buffer)
	b.Reset()
	f.Funnel(v, b)
	h1, h2 = murmur3.Sum128(b.Bytes())
	if b.Len() <= maxPooledBuffer {
		buffers.Put(b)
	}
	return h1, h2
}
