package main

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeMachine is a machine's list of addresses that a test can change,
// and the prefixes its kernel routes to it besides (AnyIP).
type fakeMachine struct {
	prefixes atomic.Pointer[[]netip.Prefix]
	err      atomic.Pointer[error]
	lists    atomic.Int64

	routes   []netip.Prefix
	routeErr error
	lookups  atomic.Int64
}

// route is the fake machine's kernel: every address of its list, and of
// its local routes, is delivered locally.
func (m *fakeMachine) route(a netip.Addr) (bool, error) {
	m.lookups.Add(1)
	if m.routeErr != nil {
		return false, m.routeErr
	}
	for _, p := range append(*m.prefixes.Load(), m.routes...) {
		if p.Contains(a) {
			return true, nil
		}
	}
	return false, nil
}

func newFakeMachine(ps ...string) *fakeMachine {
	m := &fakeMachine{}
	m.set(ps...)
	return m
}

func (m *fakeMachine) set(ps ...string) {
	var list []netip.Prefix
	for _, p := range ps {
		list = append(list, netip.MustParsePrefix(p))
	}
	m.prefixes.Store(&list)
}

// noLocalRoutes is a kernel that routes nothing to this machine but its
// interfaces' addresses, for tests whose fake machine has the addresses.
func noLocalRoutes(netip.Addr) (bool, error) { return false, nil }

func (m *fakeMachine) list() ([]netip.Prefix, error) {
	m.lists.Add(1)
	if err := m.err.Load(); err != nil {
		return nil, *err
	}
	return *m.prefixes.Load(), nil
}

// TestMachineAddresses checks that this machine's addresses are refused in
// every spelling, even when -allow-hosts lists them, by address or by name,
// unless AllowMachine; and that the proxy's own listeners are refused even
// then.
func TestMachineAddresses(t *testing.T) {
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	// A public address and a loopback prefix, as a host with a global
	// address has; nothing is dialled but the echo server.
	m := newFakeMachine("9.9.9.9/32", "2620:fe::9/128", "127.0.0.0/8", "::1/128")
	resolver := fakeResolver{"me.test": addrs("9.9.9.9"), "me6.test": addrs("2620:fe::9"), "echo.test": addrs("127.0.0.1")}
	policy := mustPolicy(t, "443,"+port, "9.9.9.9/32,2620:fe::/32,127.0.0.0/8,me.test,echo.test")
	p := startProxy(t, config{Policy: policy, Resolver: resolver, LocalAddrs: m.list})
	for _, target := range []string{
		"9.9.9.9:443",
		"[::ffff:9.9.9.9]:443",
		"[::9.9.9.9]:443",
		"[64:ff9b::9.9.9.9]:443", // a NAT64 translator forwards it to 9.9.9.9
		"[2620:fe::9]:443",
		"me.test:443",
		"me6.test:443",
		echo,
		"127.0.0.2:" + port, // not an interface's address, but its loopback prefix's
		"echo.test:" + port,
	} {
		status, body := p.statusOf(t, target)
		assert.Equal(t, http.StatusForbidden, status, target)
		assert.Equal(t, "destination address not allowed\n", body, target)
	}
	status, _ := p.statusOf(t, "[2620:fe::9%25eth0]:443")
	assert.Equal(t, http.StatusBadRequest, status, "a zone is refused")
	assert.EqualValues(t, 10, p.snapshot().Rejected["this_machine"])
	assert.Zero(t, p.dials.Load())

	// With AllowMachine, the policy judges them like any other: 127.0.0.0/8
	// is listed, so the echo server is reached; 127.0.0.1 on the proxy's
	// own port is still the proxy.
	p2 := startProxy(t, config{Policy: mustPolicy(t, "1-65535", "127.0.0.0/8"), Resolver: resolver, LocalAddrs: m.list, AllowMachine: true})
	for _, target := range []string{echo, "echo.test:" + port} {
		conn, _ := p2.openTunnel(t, target)
		conn.Close()
	}
	for _, target := range []string{p2.url.Host, "[::ffff:127.0.0.1]:" + p2.url.Port()} {
		status, _ := p2.statusOf(t, target)
		assert.Equal(t, http.StatusForbidden, status, target)
	}
	status, _ = p2.statusOf(t, "[::1]:"+port)
	assert.Equal(t, http.StatusForbidden, status, "::1 is not listed")
	s := p2.snapshot()
	assert.EqualValues(t, 2, s.Rejected["proxy_itself"])
	assert.EqualValues(t, 1, s.Rejected["loopback"])
	assert.Zero(t, s.Rejected["this_machine"])
}

// TestMachineWildcardListener checks that a listener on an unspecified
// address is the proxy on every address of the machine.
func TestMachineWildcardListener(t *testing.T) {
	m := newFakeMachine("9.9.9.9/32", "127.0.0.0/8")
	p := startProxy(t, config{
		Policy:       mustPolicy(t, "1-65535", "0.0.0.0/0"),
		Self:         []netip.AddrPort{netip.MustParseAddrPort("[::]:8080")},
		LocalAddrs:   m.list,
		AllowMachine: true,
	})
	for _, target := range []string{"9.9.9.9:8080", "127.0.0.5:8080", "[::ffff:9.9.9.9]:8080", "[64:ff9b::9.9.9.9]:8080"} {
		status, _ := p.statusOf(t, target)
		assert.Equal(t, http.StatusForbidden, status, target)
	}
	assert.EqualValues(t, 4, p.snapshot().Rejected["proxy_itself"])
	assert.Zero(t, p.dials.Load())
}

// TestMachineRefresh checks that the list of the machine's addresses is
// taken again once it is machineRefresh old, so that an address an
// interface gains is refused from then on, and that a list that fails
// keeps the previous one.
func TestMachineRefresh(t *testing.T) {
	echo := echoServer(t)
	m := newFakeMachine("9.9.9.9/32")
	p := startProxy(t, config{Policy: mustPolicy(t, "1-65535", "127.0.0.1/32"), LocalAddrs: m.list})
	conn, _ := p.openTunnel(t, echo)
	conn.Close()

	m.set("9.9.9.9/32", "127.0.0.1/32") // the machine gains the address
	lists := m.lists.Load()
	conn, _ = p.openTunnel(t, echo)
	conn.Close()
	assert.Equal(t, lists, m.lists.Load(), "a list younger than machineRefresh is used as it is")

	p.clock.Advance(machineRefresh)
	status, _ := p.statusOf(t, echo)
	assert.Equal(t, http.StatusForbidden, status)
	assert.EqualValues(t, 1, p.snapshot().Rejected["this_machine"])

	failure := errors.New("netlink: no buffer space")
	m.err.Store(&failure)
	p.clock.Advance(machineRefresh)
	status, _ = p.statusOf(t, echo)
	assert.Equal(t, http.StatusForbidden, status, "the previous list is kept")
	assert.Contains(t, p.log.String(), "no buffer space")

	m.err.Store(nil)
	m.set("9.9.9.9/32")
	p.clock.Advance(machineRefresh)
	conn, _ = p.openTunnel(t, echo)
	conn.Close()
	assert.EqualValues(t, 3, p.dials.Load(), "the refused one is not dialled")
}

// TestInterfacePrefixes checks the real list against net.InterfaceAddrs:
// every address of every interface is in it, and loopback interfaces'
// prefixes whole.
func TestInterfacePrefixes(t *testing.T) {
	ps, err := interfacePrefixes()
	require.NoError(t, err)
	// Without the kernel's routes: the list alone.
	m, err := newMachine(interfacePrefixes, noLocalRoutes, time.Now, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	contains := func(a netip.Addr) bool {
		mine, err := m.contains(a)
		require.NoError(t, err)
		return mine
	}
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	require.NotEmpty(t, addrs)
	for _, a := range addrs {
		n := a.(*net.IPNet)
		ip, _ := netip.AddrFromSlice(n.IP)
		assert.True(t, contains(canonical(ip)), "%v is this machine's, in %v", ip, ps)
		if ip = canonical(ip); ip == netip.MustParseAddr("127.0.0.1") {
			if ones, _ := n.Mask.Size(); ones == 8 {
				assert.True(t, contains(netip.MustParseAddr("127.1.2.3")), "all of 127.0.0.0/8 is")
			}
		}
	}
	assert.True(t, contains(netip.IPv4Unspecified()), "0.0.0.0 reaches this machine")
	assert.True(t, contains(netip.IPv6Unspecified()))
	assert.False(t, contains(netip.MustParseAddr("2606:4700::1111")))
	t.Logf("this machine: %v", ps)
}

// TestRealMachineAddresses asks the proxy, with a policy that allows every
// address, for each address of this machine's interfaces: each is refused,
// and nothing is dialled.
func TestRealMachineAddresses(t *testing.T) {
	p := startProxy(t, config{Policy: mustPolicy(t, "443", "0.0.0.0/0,::/0")})
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	n := 0
	for _, a := range addrs {
		ip, _ := netip.AddrFromSlice(a.(*net.IPNet).IP)
		ip = canonical(ip)
		status, _ := p.statusOf(t, netip.AddrPortFrom(ip, 443).String())
		assert.Equal(t, http.StatusForbidden, status, ip)
		n++
		if ip.Is6() && ip.IsLinkLocalUnicast() {
			// The zoned form, as a client would have to write it to
			// reach a link-local address.
			ifaces, _ := net.Interfaces()
			for _, ifi := range ifaces {
				target := "[" + ip.String() + "%25" + ifi.Name + "]:443"
				status, _ := p.statusOf(t, target)
				assert.Equal(t, http.StatusBadRequest, status, target)
			}
		}
	}
	assert.EqualValues(t, n, p.snapshot().Rejected["this_machine"])
	assert.Zero(t, p.dials.Load())
	assert.False(t, strings.Contains(p.log.String(), "cannot list"))
}
