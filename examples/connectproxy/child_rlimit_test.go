//go:build linux || darwin

package main

import "syscall"

// setOpenFileLimit lowers the process's soft limit on open files to n.
func setOpenFileLimit(n uint64) error {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return err
	}
	r.Cur = n
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
}
