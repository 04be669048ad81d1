package funnel

import "github.com/mitzbloom/mitzbloom/internal/sinkbuf"

// A Sink receives the primitives a Funnel decomposes a value into. Each method
// appends the bytes that the Guava PrimitiveSink method of the same meaning
// appends, and the hash depends only on those bytes in order.
//
// A Sink is not safe for concurrent use; every Put or MightContain feeds its
// own.
type Sink interface {
	// PutByte feeds b (Guava putByte).
	PutByte(b byte)
	// PutBytes feeds the bytes of p (Guava putBytes).
	PutBytes(p []byte)
	// PutBool feeds one byte, 1 for true and 0 for false (Guava putBoolean).
	PutBool(v bool)
	// PutInt16 feeds v as 2 bytes, little-endian (Guava putShort).
	PutInt16(v int16)
	// PutChar feeds one UTF-16 code unit as 2 bytes, little-endian
	// (Guava putChar).
	PutChar(c uint16)
	// PutInt32 feeds v as 4 bytes, little-endian (Guava putInt).
	PutInt32(v int32)
	// PutInt64 feeds v as 8 bytes, little-endian (Guava putLong).
	PutInt64(v int64)
	// PutFloat32 feeds the raw IEEE-754 bits of v as 4 bytes, little-endian
	// (Guava putFloat, which uses Float.floatToRawIntBits).
	PutFloat32(v float32)
	// PutFloat64 feeds the raw IEEE-754 bits of v as 8 bytes, little-endian
	// (Guava putDouble, which uses Double.doubleToRawLongBits): -0.0 and
	// NaN payloads are fed as they are.
	PutFloat64(v float64)
	// PutString feeds the bytes of s (Guava putString(s, UTF_8)). For valid
	// UTF-8 these are the bytes Java's UTF-8 encoder writes; Java strings
	// cannot hold the invalid sequences a Go string can, and those are fed
	// unchanged.
	PutString(s string)
	// PutUnencodedChars feeds s as UTF-16 code units, 2 bytes each,
	// little-endian, with no byte order mark and no length (Guava
	// putUnencodedChars). Characters outside the Basic Multilingual Plane
	// become surrogate pairs, as in a Java string; each byte of s that is not
	// valid UTF-8 becomes U+FFFD, as in a conversion to []rune.
	PutUnencodedChars(s string)
}

var _ Sink = (*sinkbuf.Buffer)(nil)
