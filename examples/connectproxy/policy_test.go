package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustPolicy(t *testing.T, ports, hosts string) policy {
	t.Helper()
	p, err := parsePolicy(ports, hosts)
	require.NoError(t, err)
	return p
}

func connectRequest(target string) string {
	return "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n"
}

// statusOf sends a CONNECT to target and returns the status and body.
func (p *proxyUnderTest) statusOf(t *testing.T, target string) (int, string) {
	t.Helper()
	resp, _, _ := p.rawConnect(t, connectRequest(target), "")
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func addrs(ss ...string) []netip.Addr {
	var as []netip.Addr
	for _, s := range ss {
		as = append(as, netip.MustParseAddr(s))
	}
	return as
}

// TestRefusals asks for every kind of address the default policy refuses,
// by each spelling, with every port allowed, and checks that each gets 403
// with a generic reason, is counted, and that nothing was dialled.
func TestRefusals(t *testing.T) {
	echo := echoServer(t) // what a refused tunnel to loopback would reach
	_, port, _ := net.SplitHostPort(echo)
	p := startProxy(t, config{
		Policy: mustPolicy(t, "1-65535", ""),
		Resolver: fakeResolver{
			"localhost":     addrs("127.0.0.1", "::1"),
			"loopback.test": addrs("127.0.0.1"),
			"private.test":  addrs("10.0.0.1"),
			// A public address beside a private one: the name is
			// refused before anything is dialled. (Not 192.0.2.1,
			// which is documentation space, refused as reserved.)
			"mixed.test":  addrs("93.184.216.34", "192.168.1.1"),
			"mapped.test": addrs("::ffff:127.0.0.1"),
		},
	})
	for _, c := range []struct {
		target, reason string
	}{
		{"127.0.0.1:" + port, "loopback"},
		{"127.1.2.3:" + port, "loopback"},
		{"localhost:" + port, "loopback"},
		{"LocalHost.:" + port, "loopback"},
		{"loopback.test:" + port, "loopback"},
		{"mapped.test:" + port, "loopback"},
		{"[::1]:" + port, "loopback"},
		{"[::ffff:127.0.0.1]:" + port, "loopback"},
		{"0.0.0.0:" + port, "unspecified"},
		{"[::]:" + port, "unspecified"},
		{"10.0.0.1:443", "private"},
		{"192.168.1.1:443", "private"},
		{"172.16.0.1:443", "private"},
		{"[fd00::1]:443", "private"},
		{"[::ffff:10.0.0.1]:443", "private"},
		{"private.test:443", "private"},
		{"mixed.test:443", "private"},
		{"169.254.169.254:80", "link_local"},
		{"[fe80::1]:443", "link_local"},
		{"224.0.0.1:443", "multicast"},
		{"[ff02::1]:443", "multicast"},
		{"100.64.0.1:443", "reserved"},
		{"0.1.2.3:443", "reserved"},
		{"[64:ff9b::7f00:1]:443", "reserved"},
	} {
		t.Run(c.target, func(t *testing.T) {
			before := p.snapshot().Rejected[c.reason]
			status, body := p.statusOf(t, c.target)
			assert.Equal(t, http.StatusForbidden, status)
			assert.Equal(t, "destination address not allowed\n", body)
			assert.Equal(t, before+1, p.snapshot().Rejected[c.reason])
		})
	}

	// A real client to a real TLS server on loopback.
	tlsServer := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a refused tunnel reached the server")
	}))
	defer tlsServer.Close()
	_, err := p.client(tlsServer).Get(tlsServer.URL)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Forbidden")

	assert.Zero(t, p.dials.Load(), "refused destinations are not dialled")
	assert.Zero(t, p.snapshot().Tunnels.Total)
}

// TestAllowHosts opens the policy by prefix and by name, and checks that
// the port policy and the refusal of the proxy itself still hold.
func TestAllowHosts(t *testing.T) {
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	p := startProxy(t, config{
		Policy:       mustPolicy(t, "443,"+port, "127.0.0.1/32,svc.test"),
		AllowMachine: true, // the echo server is on this machine
		Resolver: fakeResolver{
			"svc.test":   addrs("::1", "127.0.0.1"),
			"other.test": addrs("::1"),
			"self.test":  addrs("127.0.0.1"),
		},
	})
	tunnel := func(target string) {
		t.Helper()
		resp, conn, br := p.rawConnect(t, connectRequest(target), "ping")
		require.Equal(t, http.StatusOK, resp.StatusCode, target)
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
		back, err := io.ReadAll(br)
		require.NoError(t, err)
		assert.Equal(t, "ping", string(back), target)
	}
	tunnel(echo)                // 127.0.0.1/32
	tunnel("svc.test:" + port)  // by name: nothing listens on ::1, 127.0.0.1 answers
	tunnel("SVC.test.:" + port) // the same name
	status, _ := p.statusOf(t, "other.test:"+port)
	assert.Equal(t, http.StatusForbidden, status, "::1 is not in 127.0.0.1/32")
	assert.EqualValues(t, 1, p.snapshot().Rejected["loopback"])

	dials := p.dials.Load()
	status, body := p.statusOf(t, "127.0.0.1:1")
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, "destination port not allowed\n", body)
	assert.EqualValues(t, 1, p.snapshot().Rejected["port"])

	// The proxy itself, by address and by a name for it: 127.0.0.1/32
	// does not open it, nor does listing its port.
	p2 := startProxy(t, config{
		Policy:   mustPolicy(t, "1-65535", "127.0.0.1/32,self.test"),
		Resolver: fakeResolver{"self.test": addrs("127.0.0.1")},
	})
	for _, target := range []string{p2.url.Host, "self.test:" + p2.url.Port(), "[::ffff:127.0.0.1]:" + p2.url.Port()} {
		status, body = p2.statusOf(t, target)
		assert.Equal(t, http.StatusForbidden, status, target)
		assert.Equal(t, "destination address not allowed\n", body)
	}
	assert.EqualValues(t, 3, p2.snapshot().Rejected["proxy_itself"])
	assert.Zero(t, p2.dials.Load())
	assert.Equal(t, dials, p.dials.Load(), "a refused port is not dialled")
}

func TestParsePolicy(t *testing.T) {
	p := mustPolicy(t, " 443, 8000-8999 ,", "10.1.0.0/16, ::ffff:192.168.0.0/112, 127.0.0.2, Intranet.Example.")
	for port, want := range map[uint16]bool{443: true, 8000: true, 8999: true, 80: false, 9000: false, 7999: false} {
		assert.Equal(t, want, p.allowsPort(port), port)
	}
	assert.True(t, p.allowsHost("intranet.example"))
	assert.True(t, p.allowsHost("INTRANET.example."))
	assert.False(t, p.allowsHost("example"))
	for addr, want := range map[string]refusal{
		"10.1.2.3":           refusalNone,
		"::ffff:10.1.2.3":    refusalNone,
		"10.2.0.1":           refusalPrivate,
		"192.168.4.5":        refusalNone, // the mapped prefix, unmapped
		"127.0.0.2":          refusalNone,
		"127.0.0.1":          refusalLoopback,
		"::ffff:127.0.0.1":   refusalLoopback,
		"93.184.216.34":      refusalNone,
		"2606:4700::1111":    refusalNone,
		"255.255.255.255":    refusalReserved,
		"::ffff:0.0.0.0":     refusalUnspecified,
		"fe80::1%eth0":       refusalLinkLocal,
		"::ffff:169.254.0.1": refusalLinkLocal,
	} {
		assert.Equal(t, want, p.addrRefusal(netip.MustParseAddr(addr)), addr)
	}
	assert.Zero(t, mustPolicy(t, "", "").Ports, "nothing is allowed by the empty policy")
	for _, c := range [][2]string{{"0", ""}, {"65536", ""}, {"9-8", ""}, {"https", ""}, {"1-", ""}, {"443", "10.0.0.0/33"}, {"443", "exa*mple"}} {
		_, err := parsePolicy(c[0], c[1])
		assert.Error(t, err, "%q", c)
	}
}

// TestErrorBodies checks that replies say what went wrong and no more: no
// resolver address, no echo of the target, which goes to the log instead.
func TestErrorBodies(t *testing.T) {
	p := startProxy(t, config{Policy: mustPolicy(t, "443", "")})
	status, body := p.statusOf(t, "nowhere.test:443")
	assert.Equal(t, http.StatusBadGateway, status)
	assert.Equal(t, "cannot resolve destination\n", body)
	assert.Contains(t, p.log.String(), fakeResolverAddr, "the detail is logged")
	assert.Contains(t, p.log.String(), "nowhere.test:443")
	resp, _, _ := p.rawConnect(t, connectRequest("nowhere.test:443"), "")
	resp.Body.Close()
	assert.Equal(t, `connectproxy; error=dns_error; details="cannot resolve destination"`, resp.Header.Get("Proxy-Status"),
		"the kind of error, for a client that shows headers only (curl -v)")

	long := strings.Repeat("a", 60) + "." + strings.Repeat("b", 1000) + ":443"
	status, body = p.statusOf(t, long)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "malformed CONNECT target\n", body)

	// A target longer than the server reads at all.
	resp, _, br := p.rawConnect(t, connectRequest(strings.Repeat("x", 64<<10)+".example:443"), "")
	body2, _ := io.ReadAll(io.LimitReader(br, 1<<20))
	resp.Body.Close()
	assert.GreaterOrEqual(t, resp.StatusCode, 400)
	assert.Less(t, len(body2), 1024, "the reply does not echo the target")
	assert.Zero(t, p.dials.Load())
}

// TestAdminAccess checks that /stats and /metrics are served on the proxy's
// port to loopback clients only, and not at all with SeparateAdmin.
func TestAdminAccess(t *testing.T) {
	for _, separate := range []bool{false, true} {
		p, err := newProxy(config{Window: window, ExpectedInsertions: 10, FPP: 0.01, SeparateAdmin: separate})
		require.NoError(t, err)
		for _, path := range []string{"/stats", "/metrics"} {
			for client, want := range map[string]int{"127.0.0.1:5000": http.StatusOK, "[::1]:5000": http.StatusOK, "192.0.2.1:5000": http.StatusNotFound, "[::ffff:10.0.0.1]:5000": http.StatusNotFound} {
				if separate {
					want = http.StatusNotFound
				}
				r := httptest.NewRequest(http.MethodGet, path, nil)
				r.RemoteAddr = client
				w := httptest.NewRecorder()
				p.ServeHTTP(w, r)
				assert.Equal(t, want, w.Code, "%s from %s, separate %v", path, client, separate)
			}
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodGet, path, nil)
			r.RemoteAddr = "192.0.2.1:5000"
			p.admin.ServeHTTP(w, r)
			assert.Equal(t, http.StatusOK, w.Code, "Admin serves whoever reaches it")
		}
		require.NoError(t, p.Close())
	}
}

// TestRefusalsEverySpelling sends a CONNECT for addresses of every entry of
// specials that is refused, written as IP literals in each spelling: plain
// and mapped or IPv4-compatible forms get 403 and are counted under the
// entry's reason, zoned ones 400; nothing is dialled.
func TestRefusalsEverySpelling(t *testing.T) {
	p := startProxy(t, config{
		Policy:     mustPolicy(t, "443", ""),
		LocalAddrs: func() ([]netip.Prefix, error) { return nil, nil },
	})
	want := map[string]int64{}
	n := 0
	eachRefusedSpelling(t, func(sp netip.Addr, why refusal) {
		target := netip.AddrPortFrom(sp, 443).String()
		status, body := p.statusOf(t, strings.ReplaceAll(target, "%", "%25"))
		if sp.Zone() != "" {
			assert.Equal(t, http.StatusBadRequest, status, target)
			want["bad_request"]++
		} else {
			assert.Equal(t, http.StatusForbidden, status, target)
			assert.Equal(t, "destination address not allowed\n", body, target)
			want[why.String()]++
		}
		n++
	})
	s := p.snapshot()
	for reason, count := range want {
		assert.Equal(t, count, s.Rejected[reason], reason)
	}
	assert.Zero(t, p.dials.Load(), "refused destinations are not dialled")
	t.Logf("%d targets refused: %v", n, want)
}

// eachRefusedSpelling calls f with every spelling of every sample address
// of every special-purpose entry that the policy refuses, and the reason.
func eachRefusedSpelling(t *testing.T, f func(sp netip.Addr, why refusal)) {
	t.Helper()
	for _, s := range specials {
		for _, a := range ownSamples(s) {
			why := wantRefusal(t, s, a)
			if why == refusalNone {
				continue
			}
			for _, sp := range spellings(a) {
				f(sp, why)
			}
		}
	}
}

// TestRefusalsResolvedSpellings is TestRefusalsEverySpelling for addresses
// that a name resolves to: a resolver may answer with any spelling, zoned
// ones among them, and each is judged in canonical form, so every refused
// entry's addresses are refused, as its reason, in every spelling. Nothing
// is dialled.
func TestRefusalsResolvedSpellings(t *testing.T) {
	resolver := fakeResolver{}
	want := map[string]refusal{}
	eachRefusedSpelling(t, func(sp netip.Addr, why refusal) {
		name := fmt.Sprintf("h%d.test", len(want))
		resolver[name] = []netip.Addr{sp}
		want[name] = why
	})
	p := startProxy(t, config{
		Policy:     mustPolicy(t, "443", ""),
		Resolver:   resolver,
		LocalAddrs: func() ([]netip.Prefix, error) { return nil, nil },
	})
	counts := map[string]int64{}
	zoned := 0
	for name, why := range want {
		status, body := p.statusOf(t, name+":443")
		assert.Equal(t, http.StatusForbidden, status, "%s: %v", name, resolver[name])
		assert.Equal(t, "destination address not allowed\n", body, name)
		counts[why.String()]++
		if resolver[name][0].Zone() != "" {
			zoned++
		}
	}
	s := p.snapshot()
	for reason, count := range counts {
		assert.Equal(t, count, s.Rejected[reason], reason)
	}
	assert.Positive(t, zoned)
	assert.Zero(t, p.dials.Load(), "refused destinations are not dialled")
	t.Logf("%d names refused, %d of them resolving to a zoned address: %v", len(want), zoned, counts)
}

// TestResolvedZones checks that a zone on a resolved address neither
// opens the policy nor hides this machine's addresses, and that an allowed
// address is dialled in canonical form, without its zone.
func TestResolvedZones(t *testing.T) {
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	m := newFakeMachine("9.9.9.9/32", "fe80::9/128", "2620:fe::9/128")
	var dialled []string
	var mu sync.Mutex
	p := startProxy(t, config{
		Policy: mustPolicy(t, "443,"+port, "127.0.0.1/32,fe80::/10,2620:fe::/32"),
		Resolver: fakeResolver{
			"mine4.test":  addrs("::ffff:9.9.9.9%eth0"),
			"mine6.test":  addrs("2620:fe::9%eth0"),
			"link.test":   addrs("fe80::9%eth0"),
			"nat64.test":  addrs("64:ff9b::909:909%eth0"),
			"loop.test":   addrs("::ffff:127.0.0.1%lo"),
			"mapped.test": addrs("::ffff:10.0.0.1%1"),
		},
		LocalAddrs: m.list,
		Dial: func(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
			mu.Lock()
			dialled = append(dialled, ap.String())
			mu.Unlock()
			return dialTCP(ctx, ap)
		},
	})
	for _, c := range []struct{ target, reason string }{
		{"mine4.test:443", "this_machine"},
		{"mine6.test:443", "this_machine"},
		{"link.test:443", "this_machine"},  // allowed by fe80::/10, but this machine's
		{"nat64.test:443", "this_machine"}, // a translator forwards it to 9.9.9.9
		{"mapped.test:443", "private"},
	} {
		before := p.snapshot().Rejected[c.reason]
		status, _ := p.statusOf(t, c.target)
		assert.Equal(t, http.StatusForbidden, status, c.target)
		assert.Equal(t, before+1, p.snapshot().Rejected[c.reason], c.target)
	}
	assert.Zero(t, p.dials.Load())

	// Allowed, and not this machine's by the fake list: dialled as
	// 127.0.0.1, the zone and the mapping gone.
	conn, _ := p.openTunnel(t, "loop.test:"+port)
	conn.Close()
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"127.0.0.1:" + port}, dialled)
}
