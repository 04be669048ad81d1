package main

import (
	"container/list"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// A connLimiter caps the client connections open at once on one listener,
// counting a tunnel's client connection until the tunnel ends. At the cap, a
// new connection takes the place of the one that has waited longest with no
// request in progress, whether it has sent nothing yet or waits between
// keep-alive requests: so idle connections, however many, cannot keep out a
// client that has a request. When no connection is idle, the new one is
// refused at once: it gets a 503, written only if the socket takes it
// without waiting, and is closed.
//
// The listener that Listener returns must be served by an http.Server that
// limitServer has set up, which tells l when a connection is idle.
type connLimiter struct {
	max int

	mu   sync.Mutex
	open int       // connections accepted and not yet closed
	idle list.List // of *limitedConn with no request in progress, the longest waiting first

	accepted, refused, shed atomic.Int64
}

// connJSON counts a listener's client connections.
type connJSON struct {
	// Max is the cap on connections open at once, Active those open, and
	// Idle those of them with no request in progress and no tunnel.
	Max    int   `json:"max"`
	Active int64 `json:"active"`
	Idle   int64 `json:"idle"`
	// Accepted counts the connections let in, Refused those closed at
	// once because every open connection was busy, and Shed the idle ones
	// closed to make room for a new one.
	Accepted int64 `json:"accepted"`
	Refused  int64 `json:"refused"`
	Shed     int64 `json:"shed"`
}

func newConnLimiter(max int) *connLimiter { return &connLimiter{max: max} }

// Listener returns ln with l's cap.
func (l *connLimiter) Listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, l: l}
}

func (l *connLimiter) stats() connJSON {
	l.mu.Lock()
	open, idle := l.open, l.idle.Len()
	l.mu.Unlock()
	return connJSON{Max: l.max, Active: int64(open), Idle: int64(idle), Accepted: l.accepted.Load(), Refused: l.refused.Load(), Shed: l.shed.Load()}
}

type limitedListener struct {
	net.Listener
	l *connLimiter
}

// Accept returns the next connection let in, refusing the ones over the
// cap on the way.
func (ln *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := ln.l.admit(c); lc != nil {
			return lc, nil
		}
	}
}

// A limitedConn is a connection counted by its limiter until it is closed.
type limitedConn struct {
	net.Conn
	l *connLimiter
	// Guarded by l.mu:
	elem    *list.Element // in l.idle, or nil
	counted bool          // counted in l.open
}

// admit counts c in, making room by closing the longest idle connection if
// needed, or refuses c and returns nil.
func (l *connLimiter) admit(c net.Conn) *limitedConn {
	lc := &limitedConn{Conn: c, l: l}
	var victim *limitedConn
	l.mu.Lock()
	if l.open >= l.max {
		if e := l.idle.Front(); e != nil {
			victim = l.idle.Remove(e).(*limitedConn)
			victim.elem, victim.counted = nil, false
			l.open--
		}
	}
	ok := l.open < l.max
	if ok {
		l.open++
		lc.counted = true
		lc.elem = l.idle.PushBack(lc) // until its first request arrives
	}
	l.mu.Unlock()

	if victim != nil {
		l.shed.Add(1)
		victim.Conn.Close()
	}
	if !ok {
		l.refused.Add(1)
		refuseConn(c)
		return nil
	}
	l.accepted.Add(1)
	return lc
}

// tooManyConns is the whole reply to a connection refused at the cap.
var tooManyConns = func() []byte {
	const body = "too many connections, try later\n"
	return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}()

// refuseConn writes tooManyConns to c, if c's socket buffer takes it at
// once, as a new socket's does, and closes c. The client may see a reset
// instead, when it had sent bytes the proxy did not read.
func refuseConn(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Millisecond))
	_, _ = c.Write(tooManyConns)
	c.Close()
}

// connState keeps l.idle in order as the server moves c between states: a
// connection is idle while it is new or waits between requests, and busy
// while a request is in progress or it carries a tunnel.
func (l *connLimiter) connState(c net.Conn, s http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok || lc.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc.elem != nil {
		l.idle.Remove(lc.elem)
		lc.elem = nil
	}
	if lc.counted && (s == http.StateNew || s == http.StateIdle) {
		lc.elem = l.idle.PushBack(lc)
	}
}

// Close closes the connection and counts it out.
func (c *limitedConn) Close() error {
	l := c.l
	l.mu.Lock()
	if c.elem != nil {
		l.idle.Remove(c.elem)
		c.elem = nil
	}
	if c.counted {
		c.counted = false
		l.open--
	}
	l.mu.Unlock()
	return c.Conn.Close()
}

// NetConn returns the connection underneath, for the tunnels that splice
// between TCP connections.
func (c *limitedConn) NetConn() net.Conn { return c.Conn }

// CloseWrite passes a tunnel's end of one direction on to the client, as
// the net.TCPConn underneath does.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// limitServer makes srv call l's connState, and any ConnState it had, and
// close l's idle connections when it shuts down: srv.Shutdown itself waits
// 5 seconds for a connection that has not sent a request yet.
func (l *connLimiter) limitServer(srv *http.Server) {
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		l.connState(c, s)
		if prev != nil {
			prev(c, s)
		}
	}
	srv.RegisterOnShutdown(l.closeIdle)
}

// closeIdle closes every idle connection.
func (l *connLimiter) closeIdle() {
	l.mu.Lock()
	var idle []*limitedConn
	for e := l.idle.Front(); e != nil; e = e.Next() {
		idle = append(idle, e.Value.(*limitedConn))
	}
	l.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
}
