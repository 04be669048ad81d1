//go:build !linux

package redistest

import "syscall"

// dieWithParent returns nil: only Linux ends a child with its parent.
func dieWithParent() *syscall.SysProcAttr { return nil }
