//go:build unix

package main

import (
	"math"
	"syscall"
)

// openFileLimit returns the process's soft limit on open files, which the
// Go runtime raises to the hard limit at start-up, and whether there is one.
func openFileLimit() (int, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	cur := uint64(r.Cur)
	if cur > math.MaxInt32 { // RLIM_INFINITY, or as good as
		return 0, false
	}
	return int(cur), true
}
