package raw

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/internal/link"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/probe"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// PutHash sets the bits of f that the hash (h1, h2) of a value selects and
// reports whether any of them changed, as f.Put does: f.Put(v) is
// PutHash(f, Sum128(Funnel(f), v)). It is for a caller that needs the hash
// of the values that changed f, to send them elsewhere. PutHash is safe for
// concurrent use like Put, and does not allocate.
func PutHash[T any](f *bloom.Filter[T], h1, h2 uint64) bool {
	c := core(f)
	return c.Probe.Put(h1, h2, c.K, c.Bits)
}

// core returns the parts of f that do not depend on T, which f begins with.
func core[T any](f *bloom.Filter[T]) *link.Core { return link.FilterCore(unsafe.Pointer(f)) }

// PutHashes puts each hash of hs in f as PutHash does, appends to dst, for
// each in order, whether it changed a bit, and returns the extended slice.
// Like f.PutMany it overlaps the memory reads of many values on a filter
// larger than the CPU caches, and it leaves the same bits set as PutHash of
// each in turn. It allocates only to grow dst, never when dst has room for
// len(hs) more answers.
func PutHashes[T any](f *bloom.Filter[T], dst []bool, hs []Hash) []bool {
	p := core(f)
	dst = slices.Grow(dst, len(hs))
	var batch [probe.BatchSize]probe.Hash
	for len(hs) > 0 {
		n := min(len(hs), len(batch))
		for i, h := range hs[:n] {
			batch[i] = probe.Hash(h)
		}
		p.Probe.Prefetch(batch[:n], p.K, p.Bits)
		for _, h := range batch[:n] {
			dst = append(dst, p.Probe.Put(h.H1, h.H2, p.K, p.Bits))
		}
		hs = hs[n:]
	}
	return dst
}

// SetBit sets bit i of f and reports whether it changed. Bits are numbered
// as in Guava (see the package documentation). SetBit of an i outside [0,
// f.BitSize()) changes nothing and reports false. SetBit is safe for
// concurrent use like f.Put.
func SetBit[T any](f *bloom.Filter[T], i int64) bool {
	bits := core(f).Bits
	if i < 0 || i >= bits.BitSize() {
		return false
	}
	return bits.Set(uint64(i))
}

// OrEncoded ORs into f the bits that b encodes from byte off of f's
// encoding on: the bytes f.WriteTo writes after its header, each 64-bit
// word 8 bytes big-endian. A copy of those bytes kept elsewhere can thus
// be ORed in a range at a time. OrEncoded returns an error wrapping
// [bloom.ErrInvalidArgument], with f unchanged, when off or len(b) is not a
// multiple of 8 or the bytes do not lie within f's BitSize()/8. It is safe
// for concurrent use like f.PutAll: each word is ORed in atomically, and a
// concurrent reader sees them arrive one by one.
func OrEncoded[T any](f *bloom.Filter[T], off int64, b string) error {
	bits := core(f).Bits
	size := bits.BitSize() / 8
	if off < 0 || off%8 != 0 || len(b)%8 != 0 || off > size || int64(len(b)) > size-off {
		return fmt.Errorf("%w: cannot OR %d bytes at byte %d into a filter of %d bytes: both must be multiples of 8, within the filter", bloom.ErrInvalidArgument, len(b), off, size)
	}
	bits.OrEncoded(int(off/8), b)
	return nil
}

// CheckCompatible returns nil if f can be combined with a filter of k hash
// functions, bitSize bits, strategy s and funnel fn, and otherwise the
// error f.PutAll returns for such a filter, wrapping [bloom.ErrIncompatible].
// It is for a filter kept elsewhere that combines with a [bloom.Filter] as
// Guava's filters combine.
func CheckCompatible[T any](f *bloom.Filter[T], k int, bitSize int64, s strategy.Strategy, fn funnel.Funnel[T]) error {
	return link.CheckCompatible(f, k, bitSize, s, fn)
}

// Funnel returns the funnel f was made, read or decoded with.
func Funnel[T any](f *bloom.Filter[T]) funnel.Funnel[T] {
	fn, _ := link.FilterFunnel(f).(funnel.Funnel[T])
	return fn
}

// Strategy returns the strategy f maps hashes to bits with.
func Strategy[T any](f *bloom.Filter[T]) strategy.Strategy {
	return core(f).Strategy
}
