package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
)

// config configures a proxy.
type config struct {
	// Window is how long destinations and clients are remembered: between
	// one and two windows after they were last seen.
	Window time.Duration
	// ExpectedInsertions is how many new destinations, and how many new
	// clients, a window is sized for; FPP is the false-positive rate of
	// each generation of the filters.
	ExpectedInsertions int64
	FPP                float64

	// Policy says which destinations are tunnelled to; the zero policy
	// allows none.
	Policy policy
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
	// LocalRoute reports whether the kernel delivers packets to an address
	// to this machine, whatever its interfaces' addresses; nil means
	// asking the kernel (kernelRoutesLocal).
	LocalRoute func(netip.Addr) (bool, error)
	// MaxTunnels bounds the tunnels open, and being opened, at once, and
	// MaxClientTunnels those from one client address; past them requests
	// get 503 and 429. 0 means 1024 and 64.
	MaxTunnels, MaxClientTunnels int
	// IdleTimeout closes a tunnel that carried no byte either way for that
	// long; 0 means 5 minutes.
	IdleTimeout time.Duration
	// SeparateAdmin is set when admin is served on a listener of its own:
	// then the proxy's port answers /stats and /metrics with 404 even to
	// loopback clients.
	SeparateAdmin bool

	// Clock is the filters' clock, and the one that ages the list of the
	// machine's addresses; nil means the system clock.
	Clock bloom.Clock
	// DialTimeout bounds resolving and connecting to a destination, all
	// its addresses together; 0 means 10s. See dialAny for each address's
	// share.
	DialTimeout time.Duration
	// Resolver looks up destinations' addresses; nil means
	// net.DefaultResolver.
	Resolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	}
	// Dial connects to addr, an address that the policy checked; nil
	// means dialTCP.
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// Log receives a line for each first sighting and each refused
	// request, with the details the client is not told; nil means no
	// logging.
	Log *slog.Logger
}

// A proxy is an HTTP CONNECT proxy that records, in two rotating Bloom
// filters, the destinations and the client addresses it has seen within a
// window (see seen). It tunnels only to the destinations its policy allows
// (see check), and it serves counts as JSON at /stats and in the Prometheus
// text format at /metrics, to loopback clients. A request for any other
// method in proxy form gets 405 Method Not Allowed.
type proxy struct {
	cfg     config
	seen    *seen    // the destinations and clients seen in the window
	machine *machine // this machine's addresses and routes
	limits  limits   // tunnels open or opening, in all and by client
	tunnels tunnels  // the open tunnels, for Close and the counts
	refused [refusals]atomic.Int64

	// dialing is cancelled by Close, to stop dials in flight.
	dialing context.Context
	cancel  context.CancelFunc

	mu       sync.Mutex
	limiters map[string]*connLimiter // by listener name, for snapshot

	// admin serves /stats and /metrics (see newAdmin). It is made once,
	// for its registry of collectors, not at each request.
	admin http.Handler
}

// newProxy returns a proxy configured by cfg.
func newProxy(cfg config) (*proxy, error) {
	s, err := newSeen(cfg.ExpectedInsertions, cfg.FPP, cfg.Window, cfg.Clock)
	if err != nil {
		return nil, err
	}
	if cfg.Dial == nil {
		cfg.Dial = dialTCP
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
	if cfg.LocalRoute == nil {
		cfg.LocalRoute = kernelRoutesLocal
	}
	now := time.Now
	if cfg.Clock != nil {
		now = cfg.Clock.Now
	}
	m, err := newMachine(cfg.LocalAddrs, cfg.LocalRoute, now, cfg.Log)
	if err != nil {
		return nil, err
	}
	p := &proxy{
		cfg:      cfg,
		seen:     s,
		machine:  m,
		limits:   limits{max: cfg.MaxTunnels, maxClient: cfg.MaxClientTunnels, perAddr: map[netip.Addr]int{}},
		tunnels:  tunnels{conns: map[net.Conn]struct{}{}},
		limiters: map[string]*connLimiter{},
	}
	p.dialing, p.cancel = context.WithCancel(context.Background())
	p.admin = newAdmin(p)
	return p, nil
}

// limit returns ln with a cap of max client connections open at once (see
// connLimiter), and makes srv, which is to serve it, keep the count. /stats
// reports the connections under name.
func (p *proxy) limit(name string, ln net.Listener, srv *http.Server, max int) net.Listener {
	l := newConnLimiter(max)
	l.limitServer(srv)
	p.mu.Lock()
	p.limiters[name] = l
	p.mu.Unlock()
	return l.Listener(ln)
}

// ServeHTTP tunnels CONNECT requests, and serves admin to loopback clients
// unless config.SeparateAdmin.
func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.connect(w, r)
	case r.URL.IsAbs():
		// A request in proxy form ("GET http://host/ HTTP/1.1") for
		// anything but a tunnel.
		w.Header().Set("Allow", http.MethodConnect)
		p.refuse(w, r, refusalMethod, nil)
	case !p.cfg.SeparateAdmin && isLoopback(r.RemoteAddr):
		p.admin.ServeHTTP(w, r)
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

// answerTime is how long a client has to take the proxy's answer once the
// dial is over: the server's write timeout would otherwise have passed
// during a dial as long as it, and a 504 would be counted and never
// delivered.
const answerTime = 5 * time.Second

// connect handles a CONNECT request: the target, the limits, the policy for
// each address, the dial, and the tunnel.
func (p *proxy) connect(w http.ResponseWriter, r *http.Request) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(p.cfg.DialTimeout + answerTime))
	if len(r.RequestURI) > maxTarget {
		p.refuse(w, r, refusalBadRequest, errors.New("target too long"))
		return
	}
	target, err := parseTarget(r.RequestURI)
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
	if why := p.limits.reserve(client); why != refusalNone {
		p.refuse(w, r, why, nil)
		return
	}
	reserved := true
	defer func() {
		if reserved {
			p.limits.release(client)
		}
	}()

	// The dial is not bound to r.Context(), which ends when the client
	// half-closes its side, as a client that has nothing more to send may
	// do right after its request.
	ctx, cancel := context.WithTimeout(p.dialing, p.cfg.DialTimeout)
	defer cancel()
	addrs, why, err := p.resolve(ctx, host)
	if why == refusalNone {
		why, err = p.check(r, host, addrs, uint16(port))
	}
	if why != refusalNone {
		p.refuse(w, r, why, err)
		return
	}
	dst, dialled, err := p.dialAny(ctx, addrs, uint16(port))
	if err != nil {
		p.refuse(w, r, p.dialRefusal(err), err)
		return
	}
	p.seen.record(dialled, target, remote, p.cfg.Log)

	src, buffered, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// HTTP/2, which has no connection to hand over.
		dst.Close()
		http.Error(w, "tunnels need HTTP/1.1", http.StatusHTTPVersionNotSupported)
		return
	}
	// Bytes the client sent right behind its request sit in the server's
	// reader, which the tunnel does not keep.
	early, _ := buffered.Reader.Peek(buffered.Reader.Buffered())
	early = append([]byte(nil), early...)
	if !p.tunnels.track(src, dst) {
		src.Close()
		dst.Close()
		return
	}
	reserved = false // the tunnel releases it
	go func() {
		defer p.limits.release(client)
		p.tunnels.run(src, early, dst, p.cfg.IdleTimeout)
	}()
}

// refuse answers r with the status and reason of why, counts it, and logs
// detail, if any, with the request.
func (p *proxy) refuse(w http.ResponseWriter, r *http.Request, why refusal, detail error) {
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
	w.Header().Set("Proxy-Status", fmt.Sprintf("connectproxy; error=%s; details=%q", info.proxyStatus, info.reason))
	http.Error(w, info.reason, info.status)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// Close stops dials in flight, ends every open tunnel and waits until their
// goroutines are done. The http.Server that serves p does not know about
// tunnels, whose connections it handed over, so shut it down too.
func (p *proxy) Close() error {
	p.cancel()
	p.limits.close()
	p.tunnels.close()
	return nil
}
