package main

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// noKeepAlive turns off the TCP keep-alives that net.Dialer and net.Listen
// set on every connection, four system calls each: a tunnel that carries
// nothing is closed after the idle timeout, and a keep-alive connection
// after the server's, whether or not the peer is still there.
const noKeepAlive = -1

// established is the answer to a CONNECT request that opened a tunnel.
var established = []byte("HTTP/1.1 200 Connection established\r\n\r\n")

// tunnels are the open tunnels, and their counts.
type tunnels struct {
	total, active      atomic.Int64
	bytesUp, bytesDown atomic.Int64 // client to destination, and back

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // both ends of every open tunnel
	closed bool
	wg     sync.WaitGroup // one per open tunnel
}

// track registers a tunnel's connections for close, and counts the tunnel,
// unless close was called.
func (ts *tunnels) track(conns ...net.Conn) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return false
	}
	for _, c := range conns {
		ts.conns[c] = struct{}{}
	}
	ts.wg.Add(1)
	ts.total.Add(1)
	ts.active.Add(1)
	return true
}

func (ts *tunnels) untrack(conns ...net.Conn) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, c := range conns {
		delete(ts.conns, c)
	}
}

// close ends every open tunnel and waits until their goroutines are done.
func (ts *tunnels) close() {
	ts.mu.Lock()
	ts.closed = true
	for c := range ts.conns {
		c.Close()
	}
	ts.mu.Unlock()
	ts.wg.Wait()
}

// run answers the CONNECT on src, which track counted, passes on early, the
// bytes the client sent right behind its request, and copies bytes both
// ways until both sides are done or the tunnel has carried no byte either
// way for idle.
func (ts *tunnels) run(src net.Conn, early []byte, dst net.Conn, idle time.Duration) {
	defer ts.wg.Done()
	defer ts.active.Add(-1)
	defer ts.untrack(src, dst)
	defer src.Close()
	defer dst.Close()
	_ = src.SetWriteDeadline(time.Now().Add(idle))
	if _, err := src.Write(established); err != nil {
		return
	}
	t := &tunnel{idle: idle, conns: [2]net.Conn{src, dst}, start: time.Now()}
	up, down := newCopiers(src, dst)
	t.up.Add(1)
	go t.upHalf(up, dst, src, early, &ts.bytesUp)
	t.half(down, src, dst, &ts.bytesDown)
	t.up.Wait()
}

// upHalf passes on early, then copies from the client up to the
// destination.
func (t *tunnel) upHalf(c copier, dst, src net.Conn, early []byte, count *atomic.Int64) {
	defer t.up.Done()
	if len(early) > 0 {
		_ = dst.SetWriteDeadline(time.Now().Add(t.idle))
		n, err := dst.Write(early)
		count.Add(int64(n))
		if err != nil {
			t.close()
			return
		}
	}
	t.half(c, dst, src, count)
}

// A tunnel is one open tunnel's two connections, the client's first, and
// when they last carried a byte.
type tunnel struct {
	idle  time.Duration
	conns [2]net.Conn
	start time.Time
	last  atomic.Int64   // since start, when a byte last went either way
	up    sync.WaitGroup // the half from the client, in a goroutine of its own
}

func (t *tunnel) progress() { t.last.Store(int64(time.Since(t.start))) }

// idleUntil returns when the tunnel is idle if no byte goes either way.
func (t *tunnel) idleUntil() time.Time {
	return t.start.Add(time.Duration(t.last.Load()) + t.idle)
}

func (t *tunnel) close() {
	for _, c := range t.conns {
		c.Close()
	}
}

// half copies src to dst with c, counting bytes, until src's end, which it
// passes on to dst, letting the other direction finish; on an error, or
// once the tunnel is idle, it ends the tunnel, so that the other direction
// does not wait for a peer that is gone.
//
// No deadline moves with each byte: src's read deadline is when the tunnel
// would be idle, and when it passes, the time of the other direction's
// last byte says whether it is. dst's write deadline bounds a write that
// the receiver takes nothing of for idle.
func (t *tunnel) half(c copier, dst, src net.Conn, count *atomic.Int64) {
	readBy := t.idleUntil()
	_ = src.SetReadDeadline(readBy)
	var writeBy time.Time
	for {
		err := c.wait()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if readBy = t.idleUntil(); !time.Now().Before(readBy) {
				t.close()
				return
			}
			_ = src.SetReadDeadline(readBy)
			continue
		}
		if err == io.EOF {
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
			return
		}
		if err != nil {
			t.close()
			return
		}
		if now := time.Now(); writeBy.Sub(now) < t.idle/2 {
			writeBy = now.Add(t.idle)
			_ = dst.SetWriteDeadline(writeBy)
		}
		n, err := c.move()
		if n > 0 {
			count.Add(n)
			t.progress()
		}
		// A read deadline that passes in move stops it before it
		// reads, and the next wait sees it again; a write deadline
		// that passes may leave bytes behind, and ends the tunnel.
		if err != nil && !(errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(writeBy)) {
			t.close()
			return
		}
	}
}

// A copier moves one direction's bytes in two steps, so that no buffer is
// held while it waits: wait returns once src has bytes, or at its end
// (io.EOF), an error or its read deadline; move passes the bytes on to dst.
type copier interface {
	wait() error
	move() (int64, error)
}

// newCopiers returns the copiers of a tunnel between a and b, from a to b
// and from b to a: copiers that splice between the TCP connections under a
// and b where they can (spliceCopier), and that read into pooled buffers
// otherwise.
func newCopiers(a, b net.Conn) (ab, ba copier) {
	if ab, ba = newSpliceCopiers(tcpConn(a), tcpConn(b)); ab != nil {
		return ab, ba
	}
	return &bufferCopier{dst: b, src: a}, &bufferCopier{dst: a, src: b}
}

// tcpConn returns the *net.TCPConn under c, or nil.
func tcpConn(c net.Conn) *net.TCPConn {
	for {
		switch v := c.(type) {
		case *net.TCPConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
}

var buffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// A bufferCopier copies through a pooled buffer, which it holds while Read
// waits: without the connection's descriptor, there is no waiting for bytes
// without reading them.
type bufferCopier struct {
	dst, src net.Conn
	buf      *[]byte
	n        int
}

func (c *bufferCopier) wait() error {
	if c.buf == nil {
		c.buf = buffers.Get().(*[]byte)
	}
	n, err := c.src.Read(*c.buf)
	if c.n = n; n > 0 {
		return nil // an error comes again with the next Read
	}
	buffers.Put(c.buf)
	c.buf = nil
	return err
}

func (c *bufferCopier) move() (int64, error) {
	if c.buf == nil {
		return 0, nil
	}
	n, err := c.dst.Write((*c.buf)[:c.n])
	buffers.Put(c.buf)
	c.buf = nil
	return int64(n), err
}
