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
// splices what src has into a pipe without blocking, as Go's io.Copy
// between *net.TCPConn does, and gives the pipe back before it waits for
// src to be readable, when src had nothing; move passes the pipe's bytes
// on, and keeps the pipe for the next wait, which most often finds more
// while bytes flow, and gives it back otherwise.
//
// The pipes are the proxy's own rather than those io.Copy splices
// through, so that an idle tunnel holds none; they are made as large as
// Go's, so that one pair of splices moves what a loopback socket queues.
type spliceCopier struct {
	dst, src       *net.TCPConn
	srcRaw, dstRaw syscall.RawConn

	// raw.Read's and raw.Write's callback, made once (a closure made for
	// each call would allocate), which does what op says.
	callback func(fd uintptr) bool
	op       func(c *spliceCopier, fd uintptr) bool

	p      *pipe // from a wait that spliced bytes to the next that finds none
	inPipe int   // bytes in p
	queued int   // without a pipe: bytes in src's receive queue, by wait
	moved  int64 // by this move, to dst
	err    error // the callbacks' system call errors
	peek   [1]byte
}

// newSpliceCopiers returns the spliceCopiers of a tunnel between a and b,
// from a to b and from b to a, made in one allocation and sharing the
// connections' RawConns, which BenchmarkTunnel's allocations count.
func newSpliceCopiers(a, b *net.TCPConn) (ab, ba copier) {
	if a == nil || b == nil {
		return nil, nil
	}
	aRaw, err1 := a.SyscallConn()
	bRaw, err2 := b.SyscallConn()
	if err1 != nil || err2 != nil {
		return nil, nil
	}
	cs := &[2]spliceCopier{
		{dst: b, src: a, srcRaw: aRaw, dstRaw: bRaw},
		{dst: a, src: b, srcRaw: bRaw, dstRaw: aRaw},
	}
	for i := range cs {
		cs[i].callback = cs[i].do
	}
	return &cs[0], &cs[1]
}

// do calls c.op, for raw.Read and raw.Write.
func (c *spliceCopier) do(fd uintptr) bool { return c.op(c, fd) }

func (c *spliceCopier) wait() error {
	c.err, c.op = nil, (*spliceCopier).fill
	err := c.srcRaw.Read(c.callback)
	if err == nil {
		err = c.err
	}
	if err != nil {
		c.release() // the read deadline, src's end, or an error
	}
	return err
}

// fill splices what src has into the pipe, taking one if it holds none,
// and keeps it if that was a byte or more; else it gives the pipe back,
// and waits until src is readable when it had none. Without a pipe, it
// notes what queued says.
func (c *spliceCopier) fill(fd uintptr) bool {
	if c.p == nil {
		p, err := getPipe()
		if err != nil {
			// Out of descriptors, which the budget should prevent:
			// move copies the queued bytes through a buffer.
			c.queued, c.err = queued(fd, c.peek[:])
			return c.err != syscall.EAGAIN
		}
		c.p = p
	}
	n, err := splice(fd, c.p.w, pipeSize)
	switch {
	case err == syscall.EAGAIN:
		c.release()
		return false
	case err == nil && n == 0:
		err = io.EOF
	}
	c.inPipe, c.err = n, err
	return true
}

func (c *spliceCopier) move() (int64, error) {
	if c.p == nil {
		return c.copyQueued()
	}
	c.op, c.err, c.moved = (*spliceCopier).pumpPipe, nil, 0
	err := c.dstRaw.Write(c.callback)
	if err == nil {
		err = c.err
	}
	if err != nil {
		c.release()
	}
	return c.moved, err
}

// release gives the pipe back for other tunnels, or closes it if it holds
// bytes that will not be passed on.
func (c *spliceCopier) release() {
	switch {
	case c.p == nil:
	case c.inPipe > 0:
		c.p.close()
	default:
		putPipe(c.p)
	}
	c.p, c.inPipe = nil, 0
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

// pumpPipe splices the pipe's bytes into dst, waiting while dst's send
// buffer is full.
func (c *spliceCopier) pumpPipe(fd uintptr) bool {
	for c.inPipe > 0 {
		n, err := splice(c.p.r, int(fd), c.inPipe)
		c.inPipe -= n
		c.moved += int64(n)
		switch err {
		case nil:
		case syscall.EAGAIN:
			return false
		default:
			c.err = err
			return true
		}
	}
	return true
}

// splice moves up to n bytes from in to out without waiting, and retries
// when a signal interrupts it.
func splice[In int | uintptr, Out int | uintptr](in In, out Out, n int) (int, error) {
	for {
		m, err := syscall.Splice(int(in), nil, int(out), nil, n, spliceMove|spliceNonblock)
		if err != syscall.EINTR {
			return max(int(m), 0), err
		}
	}
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
	// socket's queue holds at once, and Go's own; where the system does
	// not allow it, they keep the default, 64 KiB.
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
