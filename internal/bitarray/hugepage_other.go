//go:build !linux

package bitarray

func adviseHugePages([]byte) error { return nil }

func populate([]byte) {}
