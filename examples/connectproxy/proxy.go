package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// Config configures a Proxy.
type Config struct {
	// Window is how long destinations and clients are remembered: between
	// one and two windows after they were last seen.
	Window time.Duration
	// ExpectedInsertions is how many new destinations, and how many new
	// clients, a window is sized for; FPP is the false-positive rate of
	// each generation of the filters.
	ExpectedInsertions int64
	FPP                float64

	// Clock is the filters' clock; nil means the system clock.
	Clock bloom.Clock
	// DialTimeout bounds the connection to a destination; 0 means 10s.
	DialTimeout time.Duration
	// Dial connects to destinations; nil means a net.Dialer's DialContext.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Log receives a line for each first sighting and each failed tunnel;
	// nil means no logging.
	Log *log.Logger
}

// A Proxy is an HTTP CONNECT proxy that records, in two rotating Bloom
// filters, the destinations and the client addresses it has seen within a
// window, and serves counts of them as JSON at /stats. It only tunnels: a
// request for any other method in proxy form gets 405 Method Not Allowed.
//
// A tunnel's destination is first seen when the filter does not remember it;
// like two Puts of one new value, two tunnels opened to a new destination at
// the same moment may both count as first seen. Tunnels have no idle
// timeout: one lasts until both ends are done or Close.
type Proxy struct {
	dests   *bloom.Rotating[string]     // "host:port", host lower-cased
	clients *bloom.Rotating[netip.Addr] // client IP addresses, IPv4 unmapped
	dial    func(ctx context.Context, network, address string) (net.Conn, error)
	timeout time.Duration
	log     *log.Logger

	tunnels, active                 atomic.Int64
	bytesUp, bytesDown              atomic.Int64 // client to destination, and back
	newDests, seenDests             atomic.Int64
	newClients, seenClients         atomic.Int64
	badRequest, notAllowed, badGate atomic.Int64
	gateTimeout                     atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // both ends of every open tunnel
	closed bool
	wg     sync.WaitGroup // one per open tunnel
}

// NewProxy returns a Proxy configured by cfg.
func NewProxy(cfg Config) (*Proxy, error) {
	var opts []bloom.Option
	if cfg.Clock != nil {
		opts = append(opts, bloom.WithClock(cfg.Clock))
	}
	dests, err := bloom.NewRotating(funnel.String, cfg.ExpectedInsertions, cfg.FPP, cfg.Window, opts...)
	if err != nil {
		return nil, err
	}
	clients, err := bloom.NewRotating(funnel.Addr, cfg.ExpectedInsertions, cfg.FPP, cfg.Window, opts...)
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		dests:   dests,
		clients: clients,
		dial:    cfg.Dial,
		timeout: cfg.DialTimeout,
		log:     cfg.Log,
		conns:   map[net.Conn]struct{}{},
	}
	if p.dial == nil {
		p.dial = (&net.Dialer{}).DialContext
	}
	if p.timeout == 0 {
		p.timeout = 10 * time.Second
	}
	if p.log == nil {
		p.log = log.New(io.Discard, "", 0)
	}
	return p, nil
}

// ServeHTTP tunnels CONNECT requests and serves /stats.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.connect(w, r)
	case r.URL.IsAbs():
		// A request in proxy form ("GET http://host/ HTTP/1.1") for
		// anything but a tunnel.
		p.notAllowed.Add(1)
		w.Header().Set("Allow", http.MethodConnect)
		http.Error(w, "this proxy only tunnels: use CONNECT", http.StatusMethodNotAllowed)
	case r.URL.Path == "/stats":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(p.Stats())
	default:
		http.NotFound(w, r)
	}
}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	target, err := parseTarget(r.URL.Host)
	if err != nil {
		p.badRequest.Add(1)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), p.timeout)
	defer cancel()
	dst, err := p.dial(ctx, "tcp", target)
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			status = http.StatusGatewayTimeout
			p.gateTimeout.Add(1)
		} else {
			p.badGate.Add(1)
		}
		p.log.Printf("CONNECT %s from %s: %v", target, r.RemoteAddr, err)
		http.Error(w, fmt.Sprintf("cannot reach %s: %v", target, err), status)
		return
	}
	p.record(target, r.RemoteAddr)

	src, buffered, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// HTTP/2, which has no connection to hand over.
		dst.Close()
		http.Error(w, "tunnels need HTTP/1.1", http.StatusHTTPVersionNotSupported)
		return
	}
	// The server's read and write deadlines, if it has any, are for
	// requests, not for a tunnel's life.
	_ = src.SetDeadline(time.Time{})
	if !p.track(src, dst) {
		src.Close()
		dst.Close()
		return
	}
	p.tunnels.Add(1)
	p.active.Add(1)
	go p.tunnel(src, buffered.Reader, dst)
}

// record counts target and the client's address, each as new if the filters
// do not remember it.
func (p *Proxy) record(target, remoteAddr string) {
	if p.dests.Put(target) {
		p.newDests.Add(1)
		p.log.Printf("first seen in the window: destination %s", target)
	} else {
		p.seenDests.Add(1)
	}
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return // not an IP client, as over a Unix socket
	}
	client := ap.Addr().Unmap()
	if p.clients.Put(client) {
		p.newClients.Add(1)
		p.log.Printf("first seen in the window: client %s", client)
	} else {
		p.seenClients.Add(1)
	}
}

// tunnel answers the CONNECT and copies bytes both ways until both sides
// are done. The client may have sent bytes after its request already, which
// sit in its bufio.Reader.
func (p *Proxy) tunnel(src net.Conn, fromSrc *bufio.Reader, dst net.Conn) {
	defer p.wg.Done()
	defer p.active.Add(-1)
	defer p.untrack(src, dst)
	defer src.Close()
	defer dst.Close()
	if _, err := io.WriteString(src, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	var halves sync.WaitGroup
	halves.Add(2)
	go func() {
		defer halves.Done()
		p.pipe(dst, fromSrc, &p.bytesUp, src, dst)
	}()
	go func() {
		defer halves.Done()
		p.pipe(src, dst, &p.bytesDown, src, dst)
	}()
	halves.Wait()
}

// pipe copies src to dst, counting bytes. At src's end it passes the end on
// to dst and lets the other direction finish; on an error, it ends the
// tunnel, so that the other direction does not wait for a peer that is gone.
func (p *Proxy) pipe(dst io.Writer, src io.Reader, count *atomic.Int64, ends ...net.Conn) {
	_, err := io.Copy(countingWriter{dst, count}, src)
	if err != nil {
		for _, c := range ends {
			c.Close()
		}
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

type countingWriter struct {
	w     io.Writer
	count *atomic.Int64
}

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.count.Add(int64(n))
	return n, err
}

// track registers a tunnel's connections for Close, and adds the tunnel to
// the wait group, unless the Proxy is closed.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	p.wg.Add(1)
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

// Close ends every open tunnel and waits until their goroutines are done.
// The http.Server that serves p does not know about tunnels, whose
// connections it handed over, so shut it down too.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

// parseTarget checks the authority of a CONNECT request and returns it in
// canonical form: a lower-case host name or an IP address, and a decimal port.
func parseTarget(authority string) (string, error) {
	host, port, err := net.SplitHostPort(authority)
	if err != nil {
		return "", fmt.Errorf("CONNECT target %q is not host:port", authority)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", fmt.Errorf("CONNECT target %q: port must be a number from 1 to 65535", authority)
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(addr.Unmap(), uint16(n)).String(), nil
	}
	if !validHostname(host) {
		return "", fmt.Errorf("CONNECT target %q: %q is neither a host name nor an IP address", authority, host)
	}
	return net.JoinHostPort(strings.ToLower(host), strconv.FormatUint(n, 10)), nil
}

// validHostname reports whether s looks like a DNS name: dot-separated labels
// of letters, digits, hyphens and underscores, none empty and none starting
// or ending with a hyphen, 253 bytes at most, with an optional final dot.
func validHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
