//go:build !linux

package main

// makeWords returns words zero words: huge pages are advised on Linux
// alone, as the library advises them.
func makeWords(words int) []uint64 { return make([]uint64, words) }

// hugePageBytes reports false: only Linux tells which memory is on huge
// pages.
func hugePageBytes(lo, hi uintptr) (int64, bool) { return 0, false }
