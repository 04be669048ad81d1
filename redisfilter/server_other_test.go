//go:build !linux

package redisfilter_test

import "syscall"

// dieWithParent returns nil: only Linux ends a child with its parent.
func dieWithParent() *syscall.SysProcAttr { return nil }
