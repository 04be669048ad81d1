//go:build !linux

package bitarray

func adviseHugePages([]uint64) {}
