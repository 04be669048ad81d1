package funnel

import "fmt"

// Sequential returns a funnel that feeds each element of a slice to f in
// order, with no separators or lengths, as Guava's
// Funnels.sequentialFunnel(f) does for a List. So [1 2] and [1] followed by
// [2] in two fields of one key feed the same bytes, and an empty slice feeds
// nothing at all; nor does Sequential tell ["ab" "c"] from ["a" "bc"].
// [Slice] keeps all of these apart.
func Sequential[T any](f Funnel[T]) Funnel[[]T] { return sequential[T]{f} }

type sequential[T any] struct {
	elem Funnel[T]
}

func (s sequential[T]) Funnel(v []T, into Sink) {
	for _, e := range v {
		s.elem.Funnel(e, into)
	}
}

func (s sequential[T]) equal(other Funnel[[]T]) bool {
	o, ok := other.(sequential[T])
	return ok && Equal(s.elem, o.elem)
}

func (s sequential[T]) String() string { return fmt.Sprintf("funnel.Sequential(%v)", s.elem) }
