// Package murmur3 computes MurmurHash3_x64_128 with seed 0, the hash behind
// Guava's Hashing.murmur3_128().
//
// It exists, rather than a dependency, so that hashing allocates nothing: the
// functions here never retain or leak their argument, so a caller's buffer
// can live on its stack, and fixed-size keys skip the byte slice altogether.
// h1 is the first 8 bytes of Guava's HashCode read little-endian (what
// HashCode.asLong returns), h2 the next 8.
package murmur3

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

const (
	c1 = 0x87c37b91114253d5
	c2 = 0x4cf5ad432745937f
)

// Sum128 returns the hash of b.
func Sum128(b []byte) (h1, h2 uint64) {
	n := len(b)
	for len(b) >= 16 {
		h1 ^= mixK1(binary.LittleEndian.Uint64(b))
		h1 = bits.RotateLeft64(h1, 27) + h2
		h1 = h1*5 + 0x52dce729
		h2 ^= mixK2(binary.LittleEndian.Uint64(b[8:]))
		h2 = bits.RotateLeft64(h2, 31) + h1
		h2 = h2*5 + 0x38495ab5
		b = b[16:]
	}
	if len(b) > 8 {
		h2 ^= mixK2(loadTail(b[8:]))
		b = b[:8]
	}
	if len(b) > 0 {
		h1 ^= mixK1(loadTail(b))
	}
	return finish(h1, h2, uint64(n))
}

// SumString returns the hash of the bytes of s, without copying them.
func SumString(s string) (h1, h2 uint64) {
	return Sum128(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// Sum64 returns the hash of the 8 bytes of v, little-endian: what Guava's
// putLong(v) feeds.
func Sum64(v uint64) (h1, h2 uint64) { return SumN(v, 8) }

// Sum32 returns the hash of the 4 bytes of v, little-endian: what Guava's
// putInt(v) feeds.
func Sum32(v uint32) (h1, h2 uint64) { return SumN(uint64(v), 4) }

// SumN returns the hash of the n low bytes of v, little-endian, for n from 1
// to 8; the other bytes of v must be zero. A key that fits in a word hashes
// without a byte slice.
func SumN(v uint64, n int) (h1, h2 uint64) {
	return finish(mixK1(v), 0, uint64(n))
}

// loadTail reads 1 to 8 bytes little-endian, as the tail of a block, with
// at most three loads rather than one per byte: bytes that two loads both
// cover land at the same place, so ORing them is harmless.
func loadTail(b []byte) uint64 {
	switch n := len(b); {
	case n == 8:
		return binary.LittleEndian.Uint64(b)
	case n >= 4:
		lo := uint64(binary.LittleEndian.Uint32(b))
		hi := uint64(binary.LittleEndian.Uint32(b[n-4:]))
		return lo | hi<<(8*(n-4))
	default:
		return uint64(b[0]) | uint64(b[n/2])<<(8*(n/2)) | uint64(b[n-1])<<(8*(n-1))
	}
}

func mixK1(k uint64) uint64 { return bits.RotateLeft64(k*c1, 31) * c2 }

func mixK2(k uint64) uint64 { return bits.RotateLeft64(k*c2, 33) * c1 }

func finish(h1, h2, n uint64) (uint64, uint64) {
	h1 ^= n
	h2 ^= n
	h1 += h2
	h2 += h1
	h1 = fmix(h1)
	h2 = fmix(h2)
	h1 += h2
	h2 += h1
	return h1, h2
}

func fmix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}
