package funnel

import (
	"encoding/binary"
	"math"
	"unicode/utf16"
)

// A Buffer is a Sink that records the bytes fed to it: the stream a filter
// hashes. It is how the filters encode values, and a way to see what a
// Funnel feeds, for instance to compare it with a Java Funnel's output.
// The zero Buffer is empty and ready to use.
type Buffer struct {
	b []byte
}

// Append appends to dst the bytes f feeds for v and returns the extended
// slice.
func Append[T any](dst []byte, f Funnel[T], v T) []byte {
	buf := Buffer{b: dst}
	f.Funnel(v, &buf)
	return buf.b
}

// Bytes returns the bytes fed so far. The slice aliases the buffer's storage
// and is valid only until the next Put or Reset.
func (b *Buffer) Bytes() []byte { return b.b }

// Len returns the number of bytes fed so far.
func (b *Buffer) Len() int { return len(b.b) }

// Reset empties the buffer but keeps its storage for reuse.
func (b *Buffer) Reset() { b.b = b.b[:0] }

// PutByte implements Sink.
func (b *Buffer) PutByte(v byte) { b.b = append(b.b, v) }

// PutBytes implements Sink.
func (b *Buffer) PutBytes(p []byte) { b.b = append(b.b, p...) }

// PutBool implements Sink.
func (b *Buffer) PutBool(v bool) {
	var x byte
	if v {
		x = 1
	}
	b.b = append(b.b, x)
}

// PutInt16 implements Sink.
func (b *Buffer) PutInt16(v int16) { b.b = binary.LittleEndian.AppendUint16(b.b, uint16(v)) }

// PutChar implements Sink.
func (b *Buffer) PutChar(c uint16) { b.b = binary.LittleEndian.AppendUint16(b.b, c) }

// PutInt32 implements Sink.
func (b *Buffer) PutInt32(v int32) { b.b = binary.LittleEndian.AppendUint32(b.b, uint32(v)) }

// PutInt64 implements Sink.
func (b *Buffer) PutInt64(v int64) { b.b = binary.LittleEndian.AppendUint64(b.b, uint64(v)) }

// PutFloat32 implements Sink.
func (b *Buffer) PutFloat32(v float32) {
	b.b = binary.LittleEndian.AppendUint32(b.b, math.Float32bits(v))
}

// PutFloat64 implements Sink.
func (b *Buffer) PutFloat64(v float64) {
	b.b = binary.LittleEndian.AppendUint64(b.b, math.Float64bits(v))
}

// PutString implements Sink.
func (b *Buffer) PutString(s string) { b.b = append(b.b, s...) }

// PutUnencodedChars implements Sink.
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
