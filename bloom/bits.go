package bloom

import (
	"fmt"
	"slices"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/probe"
)

// The methods in this file are a Filter's low level, for a filter kept
// elsewhere (redisfilter's Hybrid keeps one in Redis) that keeps a Filter
// in step with it: they put values by their hash, so that the caller knows
// the hash of each value that changed a bit, and OR in the bits another
// copy holds, in Guava's encoding, which is also a Redis bitmap's.

// PutHash sets the bits that the hash (h1, h2) of a value selects and
// reports whether any of them changed, as Put does: Put(v) is
// PutHash(funnel.Sum128(f.Funnel(), v)). It is for a caller that needs the
// hash of the values that changed f, to send them elsewhere. PutHash is
// safe for concurrent use like Put, and does not allocate.
func (f *Filter[T]) PutHash(h1, h2 uint64) bool {
	return f.probe.Put(h1, h2, f.k, f.bits)
}

// PutHashes puts each hash of hs in f as PutHash does, appends to dst, for
// each in order, whether it changed a bit, and returns the extended slice.
// Like [Filter.PutMany] it overlaps the memory reads of many values on a
// filter larger than the CPU caches, and it leaves the same bits set as
// PutHash of each in turn. It allocates only to grow dst, never when dst
// has room for len(hs) more answers.
func (f *Filter[T]) PutHashes(dst []bool, hs []funnel.Hash) []bool {
	dst = slices.Grow(dst, len(hs))
	for len(hs) > 0 {
		n := min(len(hs), probe.BatchSize)
		f.probe.Prefetch(hs[:n], f.k, f.bits)
		for _, h := range hs[:n] {
			dst = append(dst, f.probe.Put(h.H1, h.H2, f.k, f.bits))
		}
		hs = hs[n:]
	}
	return dst
}

// SetBit sets bit i of f and reports whether it changed. Bits are numbered
// as in Guava: bit i is bit i%64, from the least significant, of word
// i/64, and [Filter.WriteTo] writes each word as 8 bytes big-endian, so a
// Redis bitmap of the same bytes holds bit i at offset i^63, as SETBIT and
// GETBIT count. SetBit of an i outside [0, BitSize()) changes nothing and
// reports false. SetBit is safe for concurrent use like Put.
func (f *Filter[T]) SetBit(i int64) bool {
	if i < 0 || i >= f.bits.BitSize() {
		return false
	}
	return f.bits.Set(uint64(i))
}

// OrEncoded ORs into f the bits that b encodes from byte off of f's
// encoding on: the bytes WriteTo writes after its 6-byte header, each
// 64-bit word 8 bytes big-endian. A Redis bitmap of the same bytes holds
// the same bits (see [Filter.SetBit]), so b can be a range of one read with
// GETRANGE. OrEncoded returns an error wrapping [ErrInvalidArgument], with
// f unchanged, when off or len(b) is not a multiple of 8 or the bytes do
// not lie within f's BitSize()/8. It is safe for concurrent use like
// PutAll: each word is ORed in atomically, and a concurrent reader sees
// them arrive one by one.
func (f *Filter[T]) OrEncoded(off int64, b string) error {
	size := f.bits.BitSize() / 8
	if off < 0 || off%8 != 0 || len(b)%8 != 0 || off > size || int64(len(b)) > size-off {
		return fmt.Errorf("%w: cannot OR %d bytes at byte %d into a filter of %d bytes: both must be multiples of 8, within the filter", ErrInvalidArgument, len(b), off, size)
	}
	f.bits.OrEncoded(int(off/8), b)
	return nil
}
