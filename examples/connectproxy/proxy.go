package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// maxTarget bounds a CONNECT target: a 253-byte name, or a bracketed IPv6
// address with a zone, and a port.
const maxTarget = 300

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

	// Policy says which destinations are tunnelled to; the zero Policy
	// allows none.
	Policy Policy
	// Self are the addresses the proxy and its admin listener listen on,
	// which are never tunnelled to, whatever Policy says, nor is the local
	// address of the connection a request came on.
	Self []netip.AddrPort
	// AllowMachine lets Policy judge this machine's own addresses like any
	// other. Without it they are refused, even when Policy lists them.
	AllowMachine bool
	// LocalAddrs lists this machine's addresses; nil means those of its
	// network interfaces (interfacePrefixes). The list is taken again when
	// it is older than machineRefresh by Clock.
	LocalAddrs func() ([]netip.Prefix, error)
	// MaxTunnels bounds the tunnels open, and being opened, at once, and
	// MaxClientTunnels those from one client address; past them requests
	// get 503 and 429. 0 means 1024 and 64.
	MaxTunnels, MaxClientTunnels int
	// IdleTimeout closes a tunnel that carried no byte either way for that
	// long; 0 means 5 minutes.
	IdleTimeout time.Duration
	// SeparateAdmin is set when Admin is served on a listener of its own:
	// then the proxy's port answers /stats and /metrics with 404 even to
	// loopback clients.
	SeparateAdmin bool

	// Clock is the filters' clock, and the one that ages the list of the
	// machine's addresses; nil means the system clock.
	Clock bloom.Clock
	// DialTimeout bounds resolving and connecting to a destination; 0
	// means 10s.
	DialTimeout time.Duration
	// Resolver looks up destinations' addresses; nil means
	// net.DefaultResolver.
	Resolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	}
	// Dial connects to the address, an IP address and a port, that the
	// policy checked; nil means a net.Dialer's DialContext.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Log receives a line for each first sighting and each refused
	// request, with the details the client is not told; nil means no
	// logging.
	Log *slog.Logger
}

// A Proxy is an HTTP CONNECT proxy that records, in two rotating Bloom
// filters, the destinations and the client addresses it has seen within a
// window. It tunnels only to the destinations its Policy allows, and it
// serves counts as JSON at /stats and in the Prometheus text format at
// /metrics, to loopback clients. A request for any other method in proxy
// form gets 405 Method Not Allowed.
//
// Each address a destination's name resolves to is checked in canonical form
// (see canonical), and the checked address is the one dialled, so a name that
// resolves to a public address when checked cannot connect to a private one.
//
// A tunnel's destination is the address and port it dialled, so that
// localhost:443 and 127.0.0.1:443 are one destination. It is first seen when
// the filter does not remember it; like two Puts of one new value, two
// tunnels opened to a new destination at the same moment may both count as
// first seen.
type Proxy struct {
	dests   *bloom.Rotating[netip.AddrPort] // the addresses dialled
	clients *bloom.Rotating[netip.Addr]     // client IP addresses, IPv4 unmapped
	cfg     Config
	machine *machine

	tunnels, active         atomic.Int64
	bytesUp, bytesDown      atomic.Int64 // client to destination, and back
	newDests, seenDests     atomic.Int64
	newClients, seenClients atomic.Int64
	refused                 [refusals]atomic.Int64

	// dialing is cancelled by Close, to stop dials in flight.
	dialing context.Context
	cancel  context.CancelFunc

	mu       sync.Mutex
	conns    map[net.Conn]struct{} // both ends of every open tunnel
	perAddr  map[netip.Addr]int    // tunnels open or opening, by client
	opening  int                   // all tunnels open or opening
	closed   bool
	limiters map[string]*connLimiter // by listener name, for Stats
	wg       sync.WaitGroup          // one per open tunnel
}

// NewProxy returns a Proxy configured by cfg.
func NewProxy(cfg Config) (*Proxy, error) {
	var opts []bloom.Option
	if cfg.Clock != nil {
		opts = append(opts, bloom.WithClock(cfg.Clock))
	}
	dests, err := bloom.NewRotating(funnel.AddrPort, cfg.ExpectedInsertions, cfg.FPP, cfg.Window, opts...)
	if err != nil {
		return nil, err
	}
	clients, err := bloom.NewRotating(funnel.Addr, cfg.ExpectedInsertions, cfg.FPP, cfg.Window, opts...)
	if err != nil {
		return nil, err
	}
	if cfg.Dial == nil {
		cfg.Dial = (&net.Dialer{}).DialContext
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 5 * time.Minute
	}
	if cfg.MaxTunnels <= 0 {
		cfg.MaxTunnels = 1024
	}
	if cfg.MaxClientTunnels <= 0 {
		cfg.MaxClientTunnels = 64
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.LocalAddrs == nil {
		cfg.LocalAddrs = interfacePrefixes
	}
	now := time.Now
	if cfg.Clock != nil {
		now = cfg.Clock.Now
	}
	m, err := newMachine(cfg.LocalAddrs, now, cfg.Log)
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		dests:    dests,
		clients:  clients,
		cfg:      cfg,
		machine:  m,
		conns:    map[net.Conn]struct{}{},
		perAddr:  map[netip.Addr]int{},
		limiters: map[string]*connLimiter{},
	}
	p.dialing, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// Limit returns ln with a cap of max client connections open at once (see
// connLimiter), and makes srv, which is to serve it, keep the count. Stats
// reports the connections under name.
func (p *Proxy) Limit(name string, ln net.Listener, srv *http.Server, max int) net.Listener {
	l := newConnLimiter(max)
	l.limitServer(srv)
	p.mu.Lock()
	p.limiters[name] = l
	p.mu.Unlock()
	return l.Listener(ln)
}

// ServeHTTP tunnels CONNECT requests, and serves Admin to loopback clients
// unless Config.SeparateAdmin.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.connect(w, r)
	case r.URL.IsAbs():
		// A request in proxy form ("GET http://host/ HTTP/1.1") for
		// anything but a tunnel.
		w.Header().Set("Allow", http.MethodConnect)
		p.refuse(w, r, refusalMethod, nil)
	case !p.cfg.SeparateAdmin && isLoopback(r.RemoteAddr):
		p.Admin().ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// isLoopback reports whether remoteAddr, an http.Request's, is a loopback
// address.
func isLoopback(remoteAddr string) bool {
	ap, err := netip.ParseAddrPort(remoteAddr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// refuse answers r with the status and reason of why, counts it, and logs
// detail, if any, with the request.
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request, why refusal, detail error) {
	p.refused[why].Add(1)
	info := refusalInfo[why]
	attrs := []any{"reason", info.name, "status", info.status, "client", r.RemoteAddr}
	if r.Method == http.MethodConnect {
		attrs = append(attrs, "target", truncate(r.RequestURI, maxTarget))
	}
	if detail != nil {
		attrs = append(attrs, "err", detail)
	}
	p.cfg.Log.Info("refused "+r.Method, attrs...)
	w.Header().Set("Connection", "close")
	http.Error(w, info.reason, info.status)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	if len(r.RequestURI) > maxTarget {
		p.refuse(w, r, refusalBadRequest, errors.New("target too long"))
		return
	}
	target, err := parseTarget(r.URL.Host)
	if err != nil {
		p.refuse(w, r, refusalBadRequest, err)
		return
	}
	host, portStr, _ := net.SplitHostPort(target)
	port, _ := strconv.ParseUint(portStr, 10, 16)
	if !p.cfg.Policy.allowsPort(uint16(port)) {
		p.refuse(w, r, refusalPort, nil)
		return
	}
	// The zero Addr, for a client that is not on IP, has no limit of its
	// own.
	remote, _ := netip.ParseAddrPort(r.RemoteAddr)
	client := remote.Addr().Unmap()
	if why := p.reserve(client); why != refusalNone {
		p.refuse(w, r, why, nil)
		return
	}
	reserved := true
	defer func() {
		if reserved {
			p.release(client)
		}
	}()

	// The dial is not bound to r.Context(), which ends when the client
	// half-closes its side, as a client that has nothing more to send may
	// do right after its request.
	ctx, cancel := context.WithTimeout(p.dialing, p.cfg.DialTimeout)
	defer cancel()
	addrs, why, err := p.resolve(ctx, host)
	if why == refusalNone {
		why = p.check(r, addrs, uint16(port))
	}
	if why != refusalNone {
		p.refuse(w, r, why, err)
		return
	}
	dst, dialled, err := p.dialAny(ctx, addrs, uint16(port))
	if err != nil {
		why := refusalUnreachable
		switch {
		case p.dialing.Err() != nil:
			why = refusalShutdown
		case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
			why = refusalTimeout
		}
		p.refuse(w, r, why, err)
		return
	}
	p.record(dialled, target, r.RemoteAddr)

	src, buffered, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// HTTP/2, which has no connection to hand over.
		dst.Close()
		http.Error(w, "tunnels need HTTP/1.1", http.StatusHTTPVersionNotSupported)
		return
	}
	if !p.track(src, dst) {
		src.Close()
		dst.Close()
		return
	}
	reserved = false // the tunnel releases it
	p.tunnels.Add(1)
	p.active.Add(1)
	go p.tunnel(client, src, buffered.Reader, dst)
}

// resolve returns host's addresses, in canonical form and each once.
func (p *Proxy) resolve(ctx context.Context, host string) ([]netip.Addr, refusal, error) {
	if addr, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{canonical(addr)}, refusalNone, nil
	}
	addrs, err := p.cfg.Resolver.LookupNetIP(ctx, "ip", host)
	switch {
	case err == nil && len(addrs) == 0:
		return nil, refusalUnresolved, errors.New("no addresses")
	case err == nil:
		var out []netip.Addr
		for _, a := range addrs {
			if a = canonical(a); !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
		return out, refusalNone, nil
	case p.dialing.Err() != nil:
		return nil, refusalShutdown, err
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return nil, refusalTimeout, err
	}
	return nil, refusalUnresolved, err
}

// check returns why the proxy refuses any of addrs, in canonical form, with
// port, for r. Every address must pass: a name that resolves to a public and
// a private address is refused. The proxy's own listeners are refused first,
// whatever the policy says, then what the policy refuses, then this
// machine's addresses, unless AllowMachine. A NAT64 address is also the
// IPv4 address it embeds, which the translator forwards to, and which may
// be this machine's.
func (p *Proxy) check(r *http.Request, addrs []netip.Addr, port uint16) refusal {
	host, _, _ := net.SplitHostPort(r.URL.Host)
	named := p.cfg.Policy.allowsHost(host)
	for _, a := range addrs {
		reaches := []netip.Addr{a}
		if nat64.Contains(a) {
			reaches = append(reaches, embedded4(a))
		}
		for _, b := range reaches {
			if p.isSelf(netip.AddrPortFrom(b, port), r) {
				return refusalSelf
			}
		}
		if !named {
			if why := p.cfg.Policy.addrRefusal(a); why != refusalNone {
				return why
			}
		}
		for _, b := range reaches {
			if !p.cfg.AllowMachine && p.machine.contains(b) {
				return refusalMachine
			}
		}
	}
	return refusalNone
}

// isSelf reports whether dst, in canonical form, is where the proxy
// listens. A listener on an unspecified address listens on every address of
// the machine, among them the one r came in on.
func (p *Proxy) isSelf(dst netip.AddrPort, r *http.Request) bool {
	self := p.cfg.Self
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(local.String()); err == nil {
			self = append(self[:len(self):len(self)], ap)
		}
	}
	for _, s := range self {
		if s.Port() != dst.Port() {
			continue
		}
		a := canonical(s.Addr())
		if a == dst.Addr() || a.IsUnspecified() && p.machine.contains(dst.Addr()) {
			return true
		}
	}
	return false
}

// dialAny connects to the first of addrs that answers, on port, and returns
// the address it connected to.
func (p *Proxy) dialAny(ctx context.Context, addrs []netip.Addr, port uint16) (net.Conn, netip.AddrPort, error) {
	var errs []error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, port)
		c, err := p.cfg.Dial(ctx, "tcp", ap.String())
		if err == nil {
			return c, ap, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, netip.AddrPort{}, errors.Join(errs...)
}

// reserve counts a tunnel being opened by client, unless that is one too
// many.
func (p *Proxy) reserve(client netip.Addr) refusal {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return refusalShutdown
	case p.opening >= p.cfg.MaxTunnels:
		return refusalTooMany
	case client.IsValid() && p.perAddr[client] >= p.cfg.MaxClientTunnels:
		return refusalClientLimit
	}
	p.opening++
	if client.IsValid() {
		p.perAddr[client]++
	}
	return refusalNone
}

func (p *Proxy) release(client netip.Addr) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opening--
	if client.IsValid() {
		if p.perAddr[client]--; p.perAddr[client] == 0 {
			delete(p.perAddr, client)
		}
	}
}

// record counts the destination dialled, for target, and the client's
// address, each as new if the filters do not remember it.
func (p *Proxy) record(dialled netip.AddrPort, target, remoteAddr string) {
	if p.dests.Put(dialled) {
		p.newDests.Add(1)
		p.cfg.Log.Info("first seen in the window", "destination", dialled, "target", target)
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
		p.cfg.Log.Info("first seen in the window", "client", client)
	} else {
		p.seenClients.Add(1)
	}
}

// tunnel answers the CONNECT and copies bytes both ways until both sides
// are done or the tunnel is idle. The client may have sent bytes after its
// request already, which sit in its bufio.Reader.
func (p *Proxy) tunnel(client netip.Addr, src net.Conn, fromSrc *bufio.Reader, dst net.Conn) {
	defer p.wg.Done()
	defer p.release(client)
	defer p.active.Add(-1)
	defer p.untrack(src, dst)
	defer src.Close()
	defer dst.Close()
	t := &idle{timeout: p.cfg.IdleTimeout, conns: [2]net.Conn{src, dst}}
	t.touch()
	if _, err := io.WriteString(src, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	var halves sync.WaitGroup
	halves.Add(2)
	go func() {
		defer halves.Done()
		p.pipe(dst, fromSrc, &p.bytesUp, t)
	}()
	go func() {
		defer halves.Done()
		p.pipe(src, dst, &p.bytesDown, t)
	}()
	halves.Wait()
}

// idle closes a tunnel's connections when no byte went either way for
// timeout, by moving both connections' deadlines at every byte.
type idle struct {
	timeout time.Duration
	conns   [2]net.Conn
}

func (t *idle) touch() {
	d := time.Now().Add(t.timeout)
	for _, c := range t.conns {
		_ = c.SetDeadline(d)
	}
}

func (t *idle) close() {
	for _, c := range t.conns {
		c.Close()
	}
}

// pipe copies src to dst, counting bytes and keeping t alive. At src's end
// it passes the end on to dst and lets the other direction finish; on an
// error, the idle timeout among them, it ends the tunnel, so that the other
// direction does not wait for a peer that is gone.
func (p *Proxy) pipe(dst io.Writer, src io.Reader, count *atomic.Int64, t *idle) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			t.touch()
			w, werr := dst.Write(buf[:n])
			count.Add(int64(w))
			if werr != nil {
				t.close()
				return
			}
			t.touch()
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
	}
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

// Close stops dials in flight, ends every open tunnel and waits until their
// goroutines are done. The http.Server that serves p does not know about
// tunnels, whose connections it handed over, so shut it down too.
func (p *Proxy) Close() error {
	p.cancel()
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
// canonical form: a lower-case host name or an IP address in canonical form,
// and a decimal port. It refuses IP addresses with a zone.
// Its errors quote the authority, for the log.
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
		if addr.Zone() != "" {
			// A zone names an interface of the proxy's machine:
			// not the client's to choose, and no destination's.
			return "", fmt.Errorf("CONNECT target %q: an IPv6 zone is not a destination", authority)
		}
		return netip.AddrPortFrom(canonical(addr), uint16(n)).String(), nil
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
