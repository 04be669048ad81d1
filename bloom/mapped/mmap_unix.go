//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package mapped

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f, read-only and shared: the pages
// are the page cache's, which every process that maps the file shares.
// The kernel's default read-ahead stays: BitCount and WriteTo read the
// file from end to end, and lookups of a file in the page cache read
// nothing from the disk.
func mapFile(f *os.File, size int) (*file, error) {
	data, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap: %w", err)
	}
	return &file{data: data, release: syscall.Munmap}, nil
}
