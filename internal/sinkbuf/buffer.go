// Package sinkbuf records what a funnel feeds: the byte stream, in Guava's
// encodings, that a filter hashes.
package sinkbuf

import (
	"encoding/binary"
	"math"
	"sync"
	"unicode/utf16"
)

// A Buffer is a funnel.Sink that records the bytes fed to it, each Put
// method writing exactly what its counterpart in Guava's PrimitiveSink
// writes. The zero Buffer is empty and ready to use.
type Buffer struct {
	b []byte
}

// maxPooled is the largest buffer kept for reuse, so that one huge key
// does not pin its memory for the life of the process.
const maxPooled = 64 << 10

// pool holds the buffers values are encoded into. A Sink passed to a Funnel
// through an interface escapes, so a buffer on the stack would be moved to
// the heap on every call; a pooled buffer already lives there, and encoding
// stays allocation-free for any funnel.
var pool = sync.Pool{New: func() any { return new(Buffer) }}

// Get returns an empty Buffer from a pool shared by every user of this
// package. Give it back with Release once its bytes are no longer needed.
func Get() *Buffer {
	b := pool.Get().(*Buffer)
	b.Reset()
	return b
}

// Release returns b to the pool Get takes from, unless it has grown past
// what is worth keeping. b must not be used after.
func (b *Buffer) Release() {
	if cap(b.b) <= maxPooled {
		pool.Put(b)
	}
}

// New returns a Buffer that appends to b.
func New(b []byte) Buffer { return Buffer{b: b} }

// Bytes returns the bytes fed so far. The slice aliases the buffer's storage
// and is valid only until the next Put or Reset.
func (b *Buffer) Bytes() []byte { return b.b }

// Len returns the number of bytes fed so far.
func (b *Buffer) Len() int { return len(b.b) }

// Reset empties the buffer but keeps its storage for reuse.
func (b *Buffer) Reset() { b.b = b.b[:0] }

// PutByte implements funnel.Sink.
func (b *Buffer) PutByte(v byte) { b.b = append(b.b, v) }

// PutBytes implements funnel.Sink.
func (b *Buffer) PutBytes(p []byte) { b.b = append(b.b, p...) }

// PutBool implements funnel.Sink.
func (b *Buffer) PutBool(v bool) {
	var x byte
	if v {
		x = 1
	}
	b.b = append(b.b, x)
}

// PutInt16 implements funnel.Sink.
func (b *Buffer) PutInt16(v int16) { b.b = binary.LittleEndian.AppendUint16(b.b, uint16(v)) }

// PutChar implements funnel.Sink.
func (b *Buffer) PutChar(c uint16) { b.b = binary.LittleEndian.AppendUint16(b.b, c) }

// PutInt32 implements funnel.Sink.
func (b *Buffer) PutInt32(v int32) { b.b = binary.LittleEndian.AppendUint32(b.b, uint32(v)) }

// PutInt64 implements funnel.Sink.
func (b *Buffer) PutInt64(v int64) { b.b = binary.LittleEndian.AppendUint64(b.b, uint64(v)) }

// PutFloat32 implements funnel.Sink.
func (b *Buffer) PutFloat32(v float32) {
	b.b = binary.LittleEndian.AppendUint32(b.b, math.Float32bits(v))
}

// PutFloat64 implements funnel.Sink.
func (b *Buffer) PutFloat64(v float64) {
	b.b = binary.LittleEndian.AppendUint64(b.b, math.Float64bits(v))
}

// PutString implements funnel.Sink.
func (b *Buffer) PutString(s string) { b.b = append(b.b, s...) }

// PutUnencodedChars implements funnel.Sink.
func (b *Buffer) PutUnencodedChars(s string) {
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			b.b = binary.LittleEndian.AppendUint16(b.b, uint16(hi))
			b.b = binary.LittleEndian.AppendUint16(b.b, uint16(lo))
			continue
		}
		b.b = binary.LittleEndian.AppendUint16(b.b, uint16(r))
	}
}
