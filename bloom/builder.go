package bloom

import (
	"fmt"

	"github.com/mitzbloom/mitzbloom/funnel"
)

// A Builder fills a new [Filter] from one goroutine, with plain memory
// writes instead of the atomic ones of Filter's Put: several times
// faster on x86-64, where an atomic write is a locked instruction that
// waits for every memory access before it. It sets the bits Put would set.
// When it is filled, [Builder.Filter] hands the filter over, safe for
// concurrent use from then on.
//
// A Builder is not safe for concurrent use, like a map: its methods must
// not run concurrently with each other, or a bit set by one write can be
// lost to another. The race detector reports such races. The zero Builder
// is not usable; create one with [NewBuilder].
type Builder[T any] struct {
	f *Filter[T]
}

// NewBuilder returns a Builder of an empty filter, sized and made as
// New(f, expectedInsertions, fpp, opts...) makes one, or the error New
// would return.
func NewBuilder[T any](f funnel.Funnel[T], expectedInsertions int64, fpp float64, opts ...Option) (*Builder[T], error) {
	filter, err := newSized(f, expectedInsertions, fpp, opts, true)
	if err != nil {
		return nil, err
	}
	return &Builder[T]{filter}, nil
}

// Put adds v to the filter and reports whether any bit changed, as
// [Filter.Put] does. With the built-in funnels, Put does not allocate.
func (b *Builder[T]) Put(v T) bool { return b.f.Put(v) }

// PutMany puts every value of vs in the filter, as [Filter.PutMany] does.
func (b *Builder[T]) PutMany(vs []T) { b.f.PutMany(vs) }

// MightContain reports whether v might have been put in the filter, as
// [Filter.MightContain] does.
func (b *Builder[T]) MightContain(v T) bool { return b.f.MightContain(v) }

// Filter returns the filter b has filled, which is safe for concurrent use.
// It does not copy the filter: b goes on putting into it, from then on
// with atomic writes, so that its puts are safe beside the filter's users.
// Handing the filter to other goroutines needs what handing any value
// needs, such as a channel send.
func (b *Builder[T]) Filter() *Filter[T] {
	if b.f.probe.Plain() {
		f := b.f
		b.f = newFilter(f.funnel, f.strategy, f.k, f.bits, false)
	}
	return b.f
}

// MarshalJSON returns an error: a Builder is a way to fill a filter, not
// data. Encode the filter that [Builder.Filter] returns.
func (b *Builder[T]) MarshalJSON() ([]byte, error) {
	return nil, fmt.Errorf("%w: a Builder is not data: encode the Filter its Filter method returns", ErrInvalidArgument)
}
