package funnel

// Named returns a funnel that feeds what f feeds and is known by name. Two
// named funnels are [Equal] when their names are, whatever they wrap, and a
// named funnel is never equal to an unnamed one; its String method returns
// name. A name is what makes a funnel the same across processes and across
// the calls that build it, where comparing functions cannot: give every key
// format its own, and a new one when the format changes, as in
//
//	funnel.Named("orders/v2", funnel.Func[Order](putOrder))
//
// Filters that must combine (PutAll, a filter that many processes share)
// then check the name, and a named built-in funnel hashes as fast as the
// built-in one.
func Named[T any](name string, f Funnel[T]) Funnel[T] { return named[T]{name, f} }

type named[T any] struct {
	name string
	f    Funnel[T]
}

func (n named[T]) Funnel(v T, into Sink) { n.f.Funnel(v, into) }

func (n named[T]) String() string { return n.name }

// wrapped returns the funnel n wraps, for directOf: a named built-in funnel
// hashes as fast as the built-in one.
func (n named[T]) wrapped() any { return n.f }

func (n named[T]) equal(other Funnel[T]) bool {
	o, ok := other.(named[T])
	return ok && o.name == n.name
}
