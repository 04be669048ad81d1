package bitarray

import (
	"encoding/binary"
	"math/bits"
)

// An Encoded is a read-only bit array kept in Guava's writeTo encoding, 8
// bytes a word, big-endian, as a serialized filter's words follow its
// header: a view of bytes that it neither copies nor changes, such as a
// filter file mapped into memory. Nothing may change the bytes while it is
// in use; since nothing does, it reads them with plain loads.
//
// Bit i is bit i&63 of word i>>6, as in an Array, and so bit i&7 of byte
// 8·(i>>6) + 7 − (i&63)>>3 of the encoding, which is byte (i>>3)^7: each
// bit is one byte load away, with no byte swap, and at any offset of the
// bytes in memory, where a word of the encoding may straddle two cache
// lines. The zero Encoded has no bits; create one with NewEncoded.
type Encoded struct {
	b     []byte
	recip uint64 // ⌊(2⁶⁴−1) / BitSize()⌋, for Reduce
}

// NewEncoded returns the array that b encodes. It panics if len(b) is not a
// positive multiple of 8 of at most 8·MaxWords bytes; callers validate
// sizes first.
func NewEncoded(b []byte) *Encoded {
	if len(b) < 8 || len(b)%8 != 0 || len(b)/8 > MaxWords {
		panic("bitarray: encoded length out of range")
	}
	return &Encoded{b: b, recip: reciprocal(uint64(len(b)) << 3)}
}

// BitSize returns the number of bits in e, a multiple of 64.
func (e *Encoded) BitSize() int64 { return int64(len(e.b)) * 8 }

// WordCount returns the number of 64-bit words in e.
func (e *Encoded) WordCount() int { return len(e.b) / 8 }

// Reduce returns x modulo BitSize(), as [Array.Reduce] does.
func (e *Encoded) Reduce(x uint64) uint64 {
	return reduce(x, uint64(len(e.b))<<3, e.recip)
}

// Get reports whether bit i is set.
func (e *Encoded) Get(i uint64) bool { return e.Bit(i) != 0 }

// Bit returns bit i as 0 or 1, as [Array.Bit] does.
func (e *Encoded) Bit(i uint64) uint64 {
	return uint64(e.b[i>>3^7]>>(i&7)) & 1
}

// Count returns the number of set bits. It reads every byte, a chunk at a
// time, so that the goroutine can be preempted between chunks (see
// chunkWords).
func (e *Encoded) Count() int64 {
	var n int64
	for b := e.b; len(b) > 0; {
		m := min(len(b), 8*chunkWords)
		n += countBytes(b[:m])
		b = b[m:]
	}
	return n
}

// countBytes returns the number of bits set in b, whose length is a
// multiple of 8.
func countBytes(b []byte) int64 {
	// The order of a word's bytes does not change its count, so the
	// words are read in the platform's order, eight at a time, in four
	// sums that do not wait for each other.
	var n0, n1, n2, n3 int
	for len(b) >= 32 {
		s := (*[32]byte)(b)
		n0 += bits.OnesCount64(binary.LittleEndian.Uint64(s[0:]))
		n1 += bits.OnesCount64(binary.LittleEndian.Uint64(s[8:]))
		n2 += bits.OnesCount64(binary.LittleEndian.Uint64(s[16:]))
		n3 += bits.OnesCount64(binary.LittleEndian.Uint64(s[24:]))
		b = b[32:]
	}
	for ; len(b) >= 8; b = b[8:] {
		n0 += bits.OnesCount64(binary.LittleEndian.Uint64(b))
	}
	return int64(n0 + n1 + n2 + n3)
}

// Prefetch asks the CPU to start loading the bytes that hold the bits idx
// into its caches, as [Array.Prefetch] does. Every index must be below
// BitSize(). A prefetch of memory not yet mapped in does nothing, and never
// faults.
func (e *Encoded) Prefetch(idx []uint64) {
	prefetchBytes(&e.b[0], idx)
}
