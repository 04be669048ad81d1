package main

import (
	"cmp"
	"io"
	"net"
	"syscall"
	"unsafe"
)

// A spliceCopier moves bytes from one TCP connection to another inside the
// kernel, through a pipe (splice(2)): no byte is copied into the process.
// The pipe is held only while bytes move, not while the tunnel waits: wait
// asks the kernel how many bytes are queued, and move splices that many,
// so that a splice never waits for more.
//
// The pipes are the proxy's own rather than those io.Copy between
// *net.TCPConn splices through, so that they can be made larger: a pipe of
// pipeSize moves what a loopback socket queues in one pair of splices,
// where Go's, of 64 KiB, takes many.
type spliceCopier struct {
	dst, src       *net.TCPConn
	srcRaw, dstRaw syscall.RawConn

	// raw.Read's and raw.Write's callback, made once (a closure made for
	// each call would allocate), which does what op says.
	callback func(fd uintptr) bool
	op       func(c *spliceCopier, fd uintptr) bool

	queued int   // bytes in src's receive queue, by the last check
	p      *pipe // while move runs
	inPipe int   // bytes in p
	moved  int64 // by this move, to dst
	err    error // the callbacks' system call errors
	peek   [1]byte
}

func newSpliceCopier(dst, src *net.TCPConn) copier {
	if dst == nil || src == nil {
		return nil
	}
	srcRaw, err1 := src.SyscallConn()
	dstRaw, err2 := dst.SyscallConn()
	if err1 != nil || err2 != nil {
		return nil
	}
	c := &spliceCopier{dst: dst, src: src, srcRaw: srcRaw, dstRaw: dstRaw}
	c.callback = c.do
	return c
}

// do calls c.op, for raw.Read and raw.Write.
func (c *spliceCopier) do(fd uintptr) bool { return c.op(c, fd) }

func (c *spliceCopier) wait() error {
	c.err, c.op = nil, (*spliceCopier).checkQueued
	if err := c.srcRaw.Read(c.callback); err != nil {
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
	p, err := getPipe()
	if err != nil {
		// Out of descriptors, which the budget should prevent: the
		// queued bytes go through a buffer instead.
		return c.copyQueued()
	}
	c.p, c.inPipe, c.moved, c.err = p, 0, 0, nil
	for c.queued > 0 && err == nil {
		c.op = (*spliceCopier).drainQueued
		if err = c.srcRaw.Read(c.callback); err == nil {
			err = c.err
		}
		if err == nil && c.inPipe > 0 {
			c.op = (*spliceCopier).pumpPipe
			if err = c.dstRaw.Write(c.callback); err == nil {
				err = c.err
			}
		}
	}
	if c.inPipe > 0 {
		p.close() // bytes that will not be passed on
	} else {
		putPipe(p)
	}
	c.p = nil
	return c.moved, err
}

// copyQueued copies the queued bytes through a pooled buffer.
func (c *spliceCopier) copyQueued() (int64, error) {
	buf := buffers.Get().(*[]byte)
	defer buffers.Put(buf)
	var moved int64
	for c.queued > 0 {
		n, err := c.src.Read((*buf)[:min(c.queued, len(*buf))])
		c.queued -= n
		w, werr := c.dst.Write((*buf)[:n])
		moved += int64(w)
		if err = cmp.Or(werr, err); err != nil {
			return moved, err
		}
	}
	return moved, nil
}

// drainQueued splices what src's queue held, up to the pipe's size, into
// the pipe, which is empty.
func (c *spliceCopier) drainQueued(fd uintptr) bool {
	for {
		n, err := syscall.Splice(int(fd), nil, c.p.w, nil, min(c.queued, pipeSize), spliceMove|spliceNonblock)
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		if n == 0 && err == nil {
			err = io.ErrUnexpectedEOF // the queue had the bytes
		}
		c.inPipe, c.queued, c.err = int(n), c.queued-int(n), err
		return true
	}
}

// pumpPipe splices the pipe's bytes into dst, waiting while dst's send
// buffer is full.
func (c *spliceCopier) pumpPipe(fd uintptr) bool {
	for c.inPipe > 0 {
		n, err := syscall.Splice(c.p.r, nil, int(fd), nil, c.inPipe, spliceMove|spliceNonblock)
		if n > 0 {
			c.inPipe -= int(n)
			c.moved += int64(n)
		}
		switch err {
		case nil:
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.err = err
			return true
		}
	}
	return true
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

const (
	spliceMove     = 0x1 // SPLICE_F_MOVE
	spliceNonblock = 0x2 // SPLICE_F_NONBLOCK
	// pipeSize is what the pipes are made to hold, as much as a loopback
	// socket's queue holds at once; where the system does not allow it,
	// they keep the default, 64 KiB.
	pipeSize = 1 << 20
)

// A pipe is a pipe's read and write ends, nonblocking.
type pipe struct{ r, w int }

// pipes are the empty pipes not in use, up to their capacity: the
// descriptor budget's reservedFDs has room for them. A pipe in use is one
// of a tunnel's fdsPerTunnel.
var pipes = make(chan *pipe, 8)

// pipe2 is syscall.Pipe2, or a test's failure.
var pipe2 = syscall.Pipe2

func getPipe() (*pipe, error) {
	select {
	case p := <-pipes:
		return p, nil
	default:
	}
	var fds [2]int
	if err := pipe2(fds[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return nil, err
	}
	_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, uintptr(fds[1]), syscall.F_SETPIPE_SZ, pipeSize)
	return &pipe{r: fds[0], w: fds[1]}, nil
}

func putPipe(p *pipe) {
	select {
	case pipes <- p:
	default:
		p.close()
	}
}

func (p *pipe) close() {
	syscall.Close(p.r)
	syscall.Close(p.w)
}
