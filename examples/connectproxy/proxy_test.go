package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The filters of a proxy under test remember for window, sized for
// insertions new values a window at false-positive rate fpp.
const (
	window     = time.Minute
	insertions = 1000
	fpp        = 0.001
)

// proxyUnderTest is a proxy served on loopback, with filters on a manual
// clock, a fake resolver, and a dialer that fails the test rather than send
// a packet off the machine.
type proxyUnderTest struct {
	*proxy
	clock *bloomtest.Clock
	url   *url.URL
	dials atomic.Int64 // calls of the dialer
	log   *syncBuffer
}

// fakeResolver maps test host names to addresses; it finds no other name,
// with an error that names a resolver, as the system's does.
type fakeResolver map[string][]netip.Addr

const fakeResolverAddr = "192.0.2.53:53"

func (f fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := f[strings.TrimSuffix(host, ".")]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, Server: fakeResolverAddr, IsNotFound: true}
}

// syncBuffer is a bytes.Buffer safe for concurrent use, for logs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startProxy starts a proxy with cfg. A zero cfg.Policy allows every port
// of 127.0.0.1, where the tests' servers listen, with AllowMachine, since
// 127.0.0.1 is this machine's.
func startProxy(t testing.TB, cfg config) *proxyUnderTest {
	return startProxyTimeouts(t, cfg, serverTimeouts{})
}

func startProxyTimeouts(t testing.TB, cfg config, to serverTimeouts) *proxyUnderTest {
	return startProxyConns(t, cfg, to, maxDefaultConns)
}

// startProxyConns starts a proxy with cfg and the server's timeouts, capped
// at maxConns client connections.
func startProxyConns(t testing.TB, cfg config, to serverTimeouts, maxConns int) *proxyUnderTest {
	t.Helper()
	clock := bloomtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Window, cfg.ExpectedInsertions, cfg.FPP, cfg.Clock = window, insertions, fpp, clock
	if cfg.Policy.Ports == nil && cfg.Policy.Prefixes == nil && cfg.Policy.Hosts == nil {
		var err error
		cfg.Policy, err = parsePolicy("1-65535", "127.0.0.1/32")
		require.NoError(t, err)
		cfg.AllowMachine = true
	}
	if cfg.Resolver == nil {
		cfg.Resolver = fakeResolver{}
	}
	if cfg.LocalAddrs != nil && cfg.LocalRoute == nil {
		// A fake machine has the addresses it lists and no others.
		cfg.LocalRoute = noLocalRoutes
	}
	pt := &proxyUnderTest{clock: clock, log: &syncBuffer{}}
	cfg.Log = slog.New(slog.NewTextHandler(pt.log, nil))
	dial := cfg.Dial
	if dial == nil {
		dial = dialTCP
	}
	cfg.Dial = func(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
		pt.dials.Add(1)
		if !ap.Addr().IsLoopback() {
			t.Errorf("dial %v: tests dial loopback IP addresses only", ap)
			return nil, errors.New("not loopback")
		}
		return dial(ctx, ap)
	}
	p, err := newProxy(cfg)
	require.NoError(t, err)
	pt.proxy = p
	srv := httptest.NewUnstartedServer(p)
	srv.Config = newServer(p, cfg.Log, to)
	srv.Listener = p.limit("proxy", srv.Listener, srv.Config, maxConns)
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		p.Close()
	})
	pt.url, err = url.Parse(srv.URL)
	require.NoError(t, err)
	return pt
}

// client returns an http.Client that goes through the proxy and trusts the
// servers' certificates. It keeps no connections alive, so that every
// request opens a tunnel of its own.
func (p *proxyUnderTest) client(servers ...*httptest.Server) *http.Client {
	pool := x509.NewCertPool()
	for _, s := range servers {
		pool.AddCert(s.Certificate())
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:             http.ProxyURL(p.url),
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		DisableKeepAlives: true,
	}}
}

// stats fetches /stats over HTTP, as a monitor would.
func (p *proxyUnderTest) stats(t *testing.T) statsJSON {
	t.Helper()
	resp, err := http.Get(p.url.String() + "/stats")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var s statsJSON
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&s))
	return s
}

// waitTunnels waits until every tunnel opened so far has ended.
func (p *proxyUnderTest) waitTunnels() { p.tunnels.wg.Wait() }

func get(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

// TestTunnels sends HTTPS requests through the proxy with a real
// http.Client, which tunnels them with CONNECT, to two real servers, and
// follows the first-seen counts as the manual clock moves.
func TestTunnels(t *testing.T) {
	p := startProxy(t, config{})
	payload := strings.Repeat("tunnelled bytes ", 4096)
	serve := func(name string) *httptest.Server {
		s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s", name, payload)
		}))
		t.Cleanup(s.Close)
		return s
	}
	a, b := serve("a"), serve("b")
	c := p.client(a, b)

	assert.Equal(t, "a "+payload, get(t, c, a.URL))
	s := p.stats(t)
	assert.EqualValues(t, 1, s.Tunnels.Total)
	assert.EqualValues(t, 1, s.Destinations.FirstSeen)
	assert.EqualValues(t, 1, s.Clients.FirstSeen)

	assert.Equal(t, "a "+payload, get(t, c, a.URL))
	assert.Equal(t, "b "+payload, get(t, c, b.URL))
	s = p.stats(t)
	assert.EqualValues(t, 3, s.Tunnels.Total)
	assert.EqualValues(t, 2, s.Destinations.FirstSeen, "a's second tunnel is a repeat")
	assert.EqualValues(t, 1, s.Destinations.Repeats)
	assert.EqualValues(t, 1, s.Clients.FirstSeen, "one client, 127.0.0.1")
	assert.EqualValues(t, 2, s.Clients.Repeats)
	assert.Equal(t, approximateCount(t, a.Listener.Addr().String(), b.Listener.Addr().String()), s.Destinations.Filter.ApproximateCount)

	// Generations start every window: [0, 1m), [1m, 2m), ... A value
	// is remembered until the end of the window after the one it was last
	// seen in.
	p.clock.Advance(30 * time.Second) // 0:30
	get(t, c, a.URL)
	p.clock.Advance(time.Minute) // 1:30, b last seen in the previous window
	get(t, c, b.URL)
	s = p.stats(t)
	assert.EqualValues(t, 2, s.Destinations.FirstSeen, "within the window")
	assert.EqualValues(t, 1, s.Destinations.Filter.Rotations)

	p.clock.Advance(35 * time.Second) // 2:05
	get(t, c, a.URL)
	s = p.stats(t)
	assert.EqualValues(t, 3, s.Destinations.FirstSeen, "a, last seen at 0:30, forgotten")
	assert.EqualValues(t, 1, s.Clients.FirstSeen, "the client, seen at 1:30, remembered")
	p.clock.Advance(time.Minute) // 3:05
	get(t, c, b.URL)
	s = p.stats(t)
	assert.EqualValues(t, 4, s.Destinations.FirstSeen, "b, last seen at 1:30, forgotten")
	assert.EqualValues(t, 1, s.Clients.FirstSeen)
	p.clock.Advance(2 * time.Minute) // 5:05
	get(t, c, a.URL)
	s = p.stats(t)
	assert.EqualValues(t, 5, s.Destinations.FirstSeen)
	assert.EqualValues(t, 2, s.Clients.FirstSeen, "the client, last seen at 3:05, forgotten")
	assert.EqualValues(t, 8, s.Tunnels.Total)
	assert.EqualValues(t, 5, s.Destinations.Filter.Rotations)

	p.waitTunnels()
	s = p.stats(t)
	assert.Zero(t, s.Tunnels.Active)
	// Eight responses of the payload went down, with TLS around them.
	assert.Greater(t, s.Tunnels.BytesDown, int64(8*len(payload)))
	assert.Positive(t, s.Tunnels.BytesUp)
}

// serveConns accepts TCP connections on loopback and calls handle with
// each in a goroutine of its own, until the test ends, which waits for
// them. It returns the address.
func serveConns(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// echoServer sends back what each connection sends until its end, then
// closes it.
func echoServer(t testing.TB) string {
	t.Helper()
	return serveConns(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
}

// approximateCount returns the ApproximateElementCount of a filter made
// as a proxy under test makes its destinations' filter, after it has seen
// dests, "ip:port" each: the count a proxy's stats must give once it has
// tunnelled to exactly those destinations. It is an estimate from the bits
// set, less than len(dests) when their bits overlap, as they do for a few
// ports in a thousand at this size.
func approximateCount(t testing.TB, dests ...string) int64 {
	t.Helper()
	f, err := bloom.NewRotating(funnel.AddrPort, insertions, fpp, window)
	require.NoError(t, err)
	for _, d := range dests {
		f.Put(netip.MustParseAddrPort(d))
	}
	return f.Stats().ApproximateElementCount
}

// alwaysNew counts the destinations among dests, "ip:port" each, that a
// filter of a proxy under test finds new in whatever order they come: those
// that set a bit the others do not. That is all of them unless one's bits
// happen to lie among the others'.
func alwaysNew(t testing.TB, dests ...string) int64 {
	t.Helper()
	var n int64
	for i, d := range dests {
		others, err := bloom.New(funnel.AddrPort, insertions, fpp)
		require.NoError(t, err)
		for j, o := range dests {
			if j != i {
				others.Put(netip.MustParseAddrPort(o))
			}
		}
		if !others.MightContain(netip.MustParseAddrPort(d)) {
			n++
		}
	}
	return n
}

// rawConnect opens a connection to the proxy and sends request, then extra
// bytes right behind it, and reads the response.
func (p *proxyUnderTest) rawConnect(t *testing.T, request, extra string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", p.url.Host)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = io.WriteString(conn, request+extra)
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	require.NoError(t, err, "request %q", request)
	return resp, conn, br
}

// TestTunnelBytes tunnels to a TCP echo server, with the first bytes sent
// right behind the CONNECT request, before the proxy's answer: every byte
// must come back, and the counts must be exact.
func TestTunnelBytes(t *testing.T) {
	p := startProxy(t, config{})
	early := "sent before the proxy answered; "
	late := strings.Repeat("0123456789", 100_000)
	echoBytes(t, p, early, late)

	p.waitTunnels()
	s := p.stats(t)
	assert.EqualValues(t, len(early)+len(late), s.Tunnels.BytesUp)
	assert.EqualValues(t, len(early)+len(late), s.Tunnels.BytesDown)
	assert.EqualValues(t, 1, s.Tunnels.Total)
	assert.Zero(t, s.Tunnels.Active)
}

// TestBadRequests sends what a CONNECT-only proxy must refuse, each on a
// connection of its own, and checks the status; then a good tunnel still
// works.
func TestBadRequests(t *testing.T) {
	p := startProxy(t, config{})
	echo := echoServer(t)
	// A port nothing listens on: listen, note the port, and stop.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	ln.Close()

	connect := func(target string) string {
		return "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n"
	}
	// Requests net/http rejects itself, with 400, never reach the proxy
	// or its counters.
	const byServer = -1
	cases := []struct {
		name    string
		request string
		status  int
	}{
		{"GET in proxy form", "GET http://" + echo + "/ HTTP/1.1\r\nHost: " + echo + "\r\n\r\n", http.StatusMethodNotAllowed},
		{"POST in proxy form", "POST http://" + echo + "/ HTTP/1.1\r\nHost: " + echo + "\r\nContent-Length: 2\r\n\r\nhi", http.StatusMethodNotAllowed},
		{"unreachable target", connect(closed), http.StatusBadGateway},
		{"no port", connect("example.com"), http.StatusBadRequest},
		{"no host", connect(":443"), http.StatusBadRequest},
		{"port 0", connect("127.0.0.1:0"), http.StatusBadRequest},
		{"port too large", connect("127.0.0.1:65536"), http.StatusBadRequest},
		{"named port", connect("example.com:https"), byServer},
		{"space in target", connect("exa mple.com:443"), byServer},
		{"slash in target", connect("example.com/x:443"), byServer},
		{"empty label", connect("example..com:443"), http.StatusBadRequest},
		{"path instead of authority", "CONNECT /stats HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusBadRequest},
		{"unclosed IPv6 bracket", connect("[::1:443"), byServer},
		{"bad host name", connect("exa*mple.com:443"), http.StatusBadRequest},
		{"stats with POST", "POST /stats HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", http.StatusMethodNotAllowed},
		{"unknown path", "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusNotFound},
	}
	badRequests := 0
	for _, c := range cases {
		if c.status == http.StatusBadRequest {
			badRequests++
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, _, _ := p.rawConnect(t, c.request, "")
			defer resp.Body.Close()
			if c.status == byServer {
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
				return
			}
			assert.Equal(t, c.status, resp.StatusCode)
			if c.status == http.StatusMethodNotAllowed && strings.Contains(c.request, "http://") {
				assert.Equal(t, "CONNECT", resp.Header.Get("Allow"))
			}
		})
	}

	// A real client asking for plain HTTP through the proxy sends GET in
	// proxy form, and HTTPS to a port nothing listens on gets 502.
	c := p.client()
	resp, err := c.Get("http://" + echo + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	_, err = c.Get("https://" + closed + "/")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Bad Gateway")

	s := p.stats(t)
	assert.EqualValues(t, badRequests, s.Rejected["bad_request"])
	assert.EqualValues(t, 3, s.Rejected["method_not_allowed"])
	assert.EqualValues(t, 2, s.Rejected["unreachable"])
	assert.Zero(t, s.Tunnels.Total)
	assert.Zero(t, s.Destinations.FirstSeen, "refused targets are not recorded")

	// Still up.
	resp, conn, br := p.rawConnect(t, connect(echo), "ping")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	pong, err := io.ReadAll(br)
	require.NoError(t, err)
	assert.Equal(t, "ping", string(pong))
}

// TestDialErrors checks the status for each way a dial fails, with a dialer
// that fails as told.
func TestDialErrors(t *testing.T) {
	var fail atomic.Pointer[error]
	p := startProxy(t, config{
		DialTimeout: time.Hour,
		Resolver:    fakeResolver{"nowhere.invalid": {netip.MustParseAddr("127.0.0.1")}},
		Dial: func(context.Context, netip.AddrPort) (net.Conn, error) {
			return nil, *fail.Load()
		},
	})
	for _, c := range []struct {
		name   string
		err    error
		status int
	}{
		{"timeout", &net.OpError{Op: "dial", Net: "tcp", Err: context.DeadlineExceeded}, http.StatusGatewayTimeout},
		{"no such host", &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}, http.StatusBadGateway},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("connection refused")}, http.StatusBadGateway},
	} {
		t.Run(c.name, func(t *testing.T) {
			fail.Store(&c.err)
			resp, _, _ := p.rawConnect(t, "CONNECT nowhere.invalid:443 HTTP/1.1\r\nHost: nowhere.invalid:443\r\n\r\n", "")
			resp.Body.Close()
			assert.Equal(t, c.status, resp.StatusCode)
		})
	}
	s := p.stats(t)
	assert.EqualValues(t, 1, s.Rejected["timeout"])
	assert.EqualValues(t, 2, s.Rejected["unreachable"])
}

// TestParseTarget checks the canonical form of CONNECT targets, so that one
// destination is one value in the filter.
func TestParseTarget(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM:443":          "example.com:443",
		"example.com.:0443":        "example.com.:443",
		"127.0.0.1:8080":           "127.0.0.1:8080",
		"[::1]:443":                "[::1]:443",
		"[::ffff:10.0.0.1]:443":    "10.0.0.1:443",
		"[2001:DB8::1]:443":        "[2001:db8::1]:443",
		"under_score.example:1":    "under_score.example:1",
		"xn--bcher-kva.example:80": "xn--bcher-kva.example:80",
	} {
		got, err := parseTarget(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{"", "example.com", ":80", "example.com:", "-a.example:80", "a-.example:80", strings.Repeat("a", 64) + ".example:80", "[::1]:-1", "[::1]:+80"} {
		_, err := parseTarget(in)
		assert.Error(t, err, in)
	}
}

// TestConcurrentTunnels opens many tunnels at once, to the same and to
// different destinations, and checks the counts add up.
func TestConcurrentTunnels(t *testing.T) {
	p := startProxy(t, config{})
	echoes := []string{echoServer(t), echoServer(t), echoServer(t)}
	const tunnels = 30
	var wg sync.WaitGroup
	for i := range tunnels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := echoes[i%len(echoes)]
			conn, err := net.Dial("tcp", p.url.Host)
			if !assert.NoError(t, err) {
				return
			}
			defer conn.Close()
			msg := fmt.Sprintf("tunnel %d", i)
			_, err = io.WriteString(conn, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n"+msg)
			assert.NoError(t, err)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
			if !assert.NoError(t, err) || !assert.Equal(t, http.StatusOK, resp.StatusCode) {
				return
			}
			assert.NoError(t, conn.(*net.TCPConn).CloseWrite())
			back, err := io.ReadAll(br)
			assert.NoError(t, err)
			assert.Equal(t, msg, string(back))
		}()
	}
	wg.Wait()
	p.waitTunnels()
	s := p.stats(t)
	assert.EqualValues(t, tunnels, s.Tunnels.Total)
	// Two tunnels to a new destination at the same moment may both find
	// it new, as two Puts of a new value may both return true.
	assert.GreaterOrEqual(t, s.Destinations.FirstSeen, alwaysNew(t, echoes...))
	assert.EqualValues(t, tunnels, s.Destinations.FirstSeen+s.Destinations.Repeats)
	assert.Equal(t, approximateCount(t, echoes...), s.Destinations.Filter.ApproximateCount)
	assert.GreaterOrEqual(t, s.Clients.FirstSeen, int64(1))
	assert.EqualValues(t, tunnels, s.Clients.FirstSeen+s.Clients.Repeats)
	assert.EqualValues(t, 1, s.Clients.Filter.ApproximateCount)
	assert.Equal(t, s.Tunnels.BytesUp, s.Tunnels.BytesDown)
}

// TestClose ends open tunnels.
func TestClose(t *testing.T) {
	p := startProxy(t, config{})
	echo := echoServer(t)
	resp, _, br := p.rawConnect(t, "CONNECT "+echo+" HTTP/1.1\r\nHost: "+echo+"\r\n\r\n", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.EqualValues(t, 1, p.snapshot().Tunnels.Active)
	require.NoError(t, p.Close())
	_, err := io.ReadAll(br) // the proxy closed its end
	assert.NoError(t, err)
	assert.Zero(t, p.snapshot().Tunnels.Active)
}

// TestDestinationIsDialledAddress checks that a destination is counted by
// the address dialled, whatever name or spelling led to it.
func TestDestinationIsDialledAddress(t *testing.T) {
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	p := startProxy(t, config{
		Policy:       mustPolicy(t, port, "127.0.0.1/32"),
		AllowMachine: true,
		Resolver: fakeResolver{
			"localhost":  addrs("127.0.0.1"),
			"alias.test": addrs("::ffff:127.0.0.1", "127.0.0.1"),
		},
	})
	for _, target := range []string{"localhost:" + port, echo, "[::ffff:127.0.0.1]:" + port, "[::127.0.0.1]:" + port, "alias.test:" + port, "LOCALHOST.:" + port} {
		conn, _ := p.openTunnel(t, target)
		conn.Close()
	}
	p.waitTunnels()
	s := p.snapshot()
	assert.EqualValues(t, 1, s.Destinations.FirstSeen, "one destination, 127.0.0.1:%s", port)
	assert.EqualValues(t, 5, s.Destinations.Repeats)
	assert.EqualValues(t, 6, p.dials.Load(), "alias.test's two addresses are one, dialled once")
	assert.Contains(t, p.log.String(), "destination=127.0.0.1:"+port+" target=localhost:"+port)
}
