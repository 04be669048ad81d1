package bloom

import (
	"fmt"

	"github.com/mitzbloom/mitzbloom/bloom/internal/hashing"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/internal/probe"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// A Filter is a Bloom filter of values of type T, compatible with Guava's
// BloomFilter<T>. The zero Filter is not usable; create one with [New] or
// [ReadFrom], or decode into it (see [Filter.UnmarshalText]). Filters travel
// as *Filter: use [Filter.Copy], not assignment, for an independent copy.
//
// A Filter is safe for concurrent use by multiple goroutines; Put and
// MightContain use atomic word operations and no locks. Methods that read the
// whole filter (ApproximateElementCount, ExpectedFPP, Equal, Copy, PutAll's
// reads of its argument, WriteTo) see each word atomically but the filter as
// a rolling snapshot while writers are active, and exactly once they are
// quiet. UnmarshalBinary and UnmarshalText are the exception: they replace
// the filter and must not run concurrently with anything else. To fill a
// filter faster from one goroutine, use a [Builder].
type Filter[T any] struct {
	// The first fields are those of link.Core, of the same types in the
	// same order, through which package raw reaches them (see
	// TestCoreLayout).
	strategy strategy.Strategy
	probe    probe.Prober
	k        int
	bits     *bitarray.Array

	funnel funnel.Funnel[T]
	hash   hashing.Hasher[T]
}

// New returns an empty filter for about expectedInsertions values with a
// false-positive probability of about fpp once they have been put, sized as
// Guava's BloomFilter.create(funnel, expectedInsertions, fpp) sizes it (see
// [Size]). It allocates BitSize()/8 bytes, one 64-bit word per 64 bits.
//
// New returns an error wrapping [ErrInvalidArgument] when expectedInsertions
// is negative, fpp is not in (0, 1), f or the strategy is nil, or the
// resulting filter would have no bits, more than 2³¹−1 words, or more than
// 255 hash functions, the cases where Guava throws, or on a 32-bit platform
// more than 2 GiB.
func New[T any](f funnel.Funnel[T], expectedInsertions int64, fpp float64, opts ...Option) (*Filter[T], error) {
	return newSized(f, expectedInsertions, fpp, opts, false)
}

// newSized returns an empty filter sized as New sizes it, with plain
// writes if plain is set.
func newSized[T any](f funnel.Funnel[T], n int64, p float64, opts []Option, plain bool) (*Filter[T], error) {
	if f == nil {
		return nil, fmt.Errorf("%w: funnel is nil", ErrInvalidArgument)
	}
	s, err := size(n, p, opts)
	if err == nil {
		err = s.fits()
	}
	if err != nil {
		return nil, err
	}
	return newFilter(f, s.cfg.strategy, s.k, bitarray.New(s.words), plain), nil
}

func newFilter[T any](f funnel.Funnel[T], s strategy.Strategy, k int, bits *bitarray.Array, plain bool) *Filter[T] {
	return &Filter[T]{funnel: f, hash: hashing.For(f), strategy: s, probe: probe.For(s == strategy.Murmur128Mitz32, plain), k: k, bits: bits}
}

// Put adds v to f and reports whether any bit changed. Put returning true
// means v was certainly not in f before; single-threaded, it always returns
// the opposite of what MightContain(v) would have returned just before.
// Two goroutines putting the same new value at once may both get true, as in
// Guava. With the built-in funnels, Put does not allocate.
func (f *Filter[T]) Put(v T) bool {
	h1, h2 := f.hash.Sum128(v)
	return f.probe.Put(h1, h2, f.k, f.bits)
}

// MightContain reports whether v might have been put in f; false means it
// certainly was not. A MightContain that happens after a Put of v returns
// (in the sense of the Go memory model) returns true. With the built-in
// funnels, MightContain does not allocate.
func (f *Filter[T]) MightContain(v T) bool {
	h1, h2 := f.hash.Sum128(v)
	return f.probe.MightContain(h1, h2, f.k, f.bits)
}

// Copy returns an independent copy of f, equal to it.
func (f *Filter[T]) Copy() *Filter[T] {
	return newFilter(f.funnel, f.strategy, f.k, f.bits.Copy(), false)
}

// IsCompatible reports whether f and other can be combined, as Guava's
// isCompatible does: whether f.PutAll(other) would succeed.
func (f *Filter[T]) IsCompatible(other *Filter[T]) bool {
	return f.checkCompatible(other) == nil
}

// PutAll adds every value put in other to f, by ORing other's bits into f's,
// as Guava's putAll does. It runs Guava's checks, in Guava's order, before
// touching a bit: other must be another filter (not f itself) with the same
// number of hash functions, bit size, strategy and funnel (see
// [funnel.Equal]). It returns an error wrapping [ErrIncompatible] (or
// [ErrInvalidArgument] for nil) that says which differs, with f unchanged.
// other is not modified; bits put in other while PutAll runs may or may not
// be copied.
func (f *Filter[T]) PutAll(other *Filter[T]) error {
	if err := f.checkCompatible(other); err != nil {
		return err
	}
	f.bits.PutAll(other.bits)
	return nil
}

func (f *Filter[T]) checkCompatible(other *Filter[T]) error {
	switch {
	case other == nil:
		return fmt.Errorf("%w: the other filter is nil", ErrInvalidArgument)
	case f == other:
		return fmt.Errorf("%w: cannot combine a filter with itself", ErrIncompatible)
	}
	return f.checkParams(other.k, other.BitSize(), other.strategy, other.funnel)
}

// checkParams returns the error PutAll returns for a filter of k hash
// functions, bitSize bits, strategy s and funnel fn, or nil: Guava's
// checks, in Guava's order.
func (f *Filter[T]) checkParams(k int, bitSize int64, s strategy.Strategy, fn funnel.Funnel[T]) error {
	switch {
	case f.k != k:
		return fmt.Errorf("%w: filters must have the same number of hash functions (%d != %d)", ErrIncompatible, f.k, k)
	case f.BitSize() != bitSize:
		return fmt.Errorf("%w: filters must have the same size underlying bit arrays (%d != %d)", ErrIncompatible, f.BitSize(), bitSize)
	case f.strategy != s:
		return fmt.Errorf("%w: filters must have equal strategies (%v != %v)", ErrIncompatible, f.strategy, s)
	case !funnel.Equal(f.funnel, fn):
		return fmt.Errorf("%w: filters must have equal funnels (%s)", ErrIncompatible, funnelMismatch(f.funnel, fn))
	}
	return nil
}

// Equal reports whether f and other are the same filter: the same number of
// hash functions, strategy, funnel and bits. A filter equals its copies and
// the filters it was serialized to or read from.
func (f *Filter[T]) Equal(other *Filter[T]) bool {
	if f == other {
		return true
	}
	if f == nil || other == nil {
		return false
	}
	return f.k == other.k && f.strategy == other.strategy &&
		funnel.Equal(f.funnel, other.funnel) && f.bits.Equal(other.bits)
}

// String returns a short description of f, such as
// "bloom.Filter{funnel.String MURMUR128_MITZ_64 9600 bits, 7 hash functions}".
// A funnel without a String method of its own is described by its type,
// and a funnel.Func also by its function and where that begins, as in
// "funnel.Func[main.Visit](main.byHost at visits.go:12)".
func (f *Filter[T]) String() string {
	return fmt.Sprintf("bloom.Filter{%s %v %d bits, %d hash functions}", funnelName(f.funnel), f.strategy, f.BitSize(), f.k)
}
