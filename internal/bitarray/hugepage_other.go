//go:build !linux

package bitarray

func adviseHugePages([]uint64) error { return nil }
