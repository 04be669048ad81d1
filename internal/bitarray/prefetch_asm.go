//go:build (amd64 || arm64) && !purego

package bitarray

// prefetch asks the CPU to bring into its caches the word of words that
// holds each bit of idx, and returns before they arrive. A prefetch never
// faults, and it changes no data.
//
//go:noescape
func prefetch(words *uint64, idx []uint64)

// prefetchBytes asks the CPU to bring into its caches the byte of the
// encoding b (see [Encoded]) that holds each bit of idx, and returns before
// they arrive.
//
//go:noescape
func prefetchBytes(b *byte, idx []uint64)
