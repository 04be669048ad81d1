//go:build !(amd64 || arm64) || purego

package bitarray

// prefetch does nothing where there is no prefetch routine: a prefetch is
// only a hint, and Go has no portable way to give it.
func prefetch(*uint64, []uint64) {}

func prefetchBytes(*byte, []uint64) {}
