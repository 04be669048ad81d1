package main

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// A spliceCopier moves bytes from one TCP connection to another inside the
// kernel: io.Copy between *net.TCPConn splices through a pipe, with no
// buffer in the process. The pipe is held only while bytes move, not while
// the tunnel waits: wait asks the kernel how many bytes are queued, and
// move splices that many, so that the splice never waits for more.
type spliceCopier struct {
	dst, src *net.TCPConn
	raw      syscall.RawConn
	lr       io.LimitedReader

	// For raw.Read's callback, made once: a closure for each wait would
	// allocate.
	check  func(fd uintptr) bool
	queued int
	err    error
	peek   [1]byte
}

func newSpliceCopier(dst, src *net.TCPConn) copier {
	if dst == nil || src == nil {
		return nil
	}
	raw, err := src.SyscallConn()
	if err != nil {
		return nil
	}
	c := &spliceCopier{dst: dst, src: src, raw: raw}
	c.check = c.checkQueued
	return c
}

func (c *spliceCopier) wait() error {
	if err := c.raw.Read(c.check); err != nil {
		return err // the read deadline, or a closed connection
	}
	return c.err
}

// checkQueued notes what queued says, and whether to wait for more.
func (c *spliceCopier) checkQueued(fd uintptr) bool {
	c.queued, c.err = queued(fd, c.peek[:])
	return c.err != syscall.EAGAIN // else wait until readable
}

func (c *spliceCopier) move() (int64, error) {
	c.lr = io.LimitedReader{R: c.src, N: int64(c.queued)}
	return c.dst.ReadFrom(&c.lr)
}

// queued returns how many bytes wait in socket fd's receive queue; io.EOF
// when none will come, the peer having closed its side; or EAGAIN when
// there are none yet. It peeks into peek, a byte.
func queued(fd uintptr, peek []byte) (int, error) {
	var n int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
		return 0, errno
	}
	if n > 0 {
		return int(n), nil
	}
	// None queued: the peer's end, a pending error, or nothing yet.
	m, _, err := syscall.Recvfrom(int(fd), peek, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case err != nil:
		return 0, err
	case m == 0:
		return 0, io.EOF
	}
	return m, nil
}
