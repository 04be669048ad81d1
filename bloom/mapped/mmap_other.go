//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package mapped

import (
	"io"
	"os"
)

// mapFile reads the first size bytes of f into memory, where there is no
// syscall.Mmap to map them with.
func mapFile(f *os.File, size int) (*file, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return &file{data: data}, nil
}
