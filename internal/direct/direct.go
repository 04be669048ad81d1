// Package direct tells the code that hashes values which funnels hash a
// value themselves, without a Sink: the built-in funnels of package funnel,
// which sets Of when it is initialized. Their Sum128 methods are trusted
// only through Of, so that a funnel of another package that happens to have
// a method of that shape is hashed from the bytes it feeds, as Guava hashes
// them.
package direct

// Of returns f, a funnel.Funnel[T], or the funnel that a named funnel f
// wraps, if it is a built-in funnel whose method Sum128(v T) (h1, h2
// uint64) returns the Murmur3-128 hash of the bytes its Funnel method feeds
// for v; otherwise it returns nil. Package funnel sets it when it is
// initialized, before any code that can name a funnel runs.
var Of func(f any) any
