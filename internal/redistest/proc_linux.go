package redistest

import "syscall"

// dieWithParent returns what makes a child process end when the test
// binary does, however it ends.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
