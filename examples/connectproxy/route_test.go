package main

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLocalRoutes checks that an address the kernel delivers locally is
// this machine's, though no interface has it: a prefix routed to the
// machine (ip route add local 45.45.46.0/24 dev lo) is refused by address
// and by name, unless AllowMachine; with it, the proxy's own port on such
// an address is still the proxy, so that it cannot tunnel into itself.
func TestLocalRoutes(t *testing.T) {
	m := newFakeMachine("127.0.0.0/8")
	m.routes = []netip.Prefix{netip.MustParsePrefix("45.45.46.0/24"), netip.MustParsePrefix("2001:4860:4860::/48")}
	resolver := fakeResolver{
		"anyip.test": addrs("45.45.46.9"),
		"mixed.test": addrs("9.9.9.9", "45.45.46.1"), // a public address and a local route
	}
	p := startProxy(t, config{Policy: mustPolicy(t, "443", ""), Resolver: resolver, LocalAddrs: m.list, LocalRoute: m.route})
	for _, target := range []string{
		"45.45.46.1:443",
		"[::ffff:45.45.46.1]:443",
		"[64:ff9b::45.45.46.1]:443", // NAT64 forwards to the embedded address
		"[2001:4860:4860::8888]:443",
		"anyip.test:443",
		"mixed.test:443",
	} {
		status, body := p.statusOf(t, target)
		assert.Equal(t, http.StatusForbidden, status, target)
		assert.Equal(t, "destination address not allowed\n", body, target)
	}
	assert.EqualValues(t, 6, p.snapshot().Rejected["this_machine"])
	assert.Zero(t, p.dials.Load())
	assert.Positive(t, m.lookups.Load())

	// With AllowMachine, listening on every address: the proxy's port on
	// a local route's address is the proxy itself.
	p2 := startProxy(t, config{
		Policy:       mustPolicy(t, "1-65535", ""),
		Self:         []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:8080")},
		Resolver:     resolver,
		LocalAddrs:   m.list,
		LocalRoute:   m.route,
		AllowMachine: true,
	})
	for _, target := range []string{"45.45.46.1:8080", "anyip.test:8080", "[::ffff:45.45.46.200]:8080"} {
		status, _ := p2.statusOf(t, target)
		assert.Equal(t, http.StatusForbidden, status, target)
	}
	assert.EqualValues(t, 3, p2.snapshot().Rejected["proxy_itself"])
	assert.Zero(t, p2.dials.Load())
}

// TestLocalRouteErrors checks that a route lookup that fails refuses the
// address, and logs why: an address the proxy cannot place may be this
// machine's.
func TestLocalRouteErrors(t *testing.T) {
	m := newFakeMachine("127.0.0.0/8")
	p := startProxy(t, config{Policy: mustPolicy(t, "443", ""), LocalAddrs: m.list, LocalRoute: m.route})
	m.routeErr = errors.New("netlink: permission denied")
	status, _ := p.statusOf(t, "9.9.9.9:443")
	assert.Equal(t, http.StatusForbidden, status)
	assert.EqualValues(t, 1, p.snapshot().Rejected["this_machine"])
	assert.Contains(t, p.log.String(), "netlink: permission denied")
	assert.Zero(t, p.dials.Load())

	// At start, a kernel that cannot answer is an error, not a proxy that
	// refuses everything.
	_, err := newProxy(config{Window: window, ExpectedInsertions: 10, FPP: 0.01, LocalAddrs: m.list, LocalRoute: m.route})
	assert.ErrorContains(t, err, "permission denied")
}

// TestKernelRoutes asks this machine's kernel: loopback and every interface
// address are local, and so is a broadcast address; a documentation
// address is not.
func TestKernelRoutes(t *testing.T) {
	local := func(s string) bool {
		l, err := kernelRoutesLocal(netip.MustParseAddr(s))
		require.NoError(t, err, s)
		return l
	}
	if !local("127.0.0.1") {
		t.Skip("this system's route lookup knows no local routes (not Linux)")
	}
	assert.True(t, local("127.5.6.7"), "all of 127.0.0.0/8 is routed locally")
	assert.True(t, local("255.255.255.255"), "the limited broadcast address")
	assert.False(t, local("2001:db8::1"))
	assert.False(t, local("198.51.100.1"))
	ifaddrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range ifaddrs {
		ip, _ := netip.AddrFromSlice(a.(*net.IPNet).IP)
		if ip = canonical(ip); ip.Is6() && ip.IsLinkLocalUnicast() {
			continue // routed by zone, which the lookup does not give
		}
		assert.True(t, local(ip.String()), ip)
	}
}

// TestKernelRoutesConcurrent asks from many goroutines at once, through
// the sockets they share: each gets the answer to its own question.
func TestKernelRoutesConcurrent(t *testing.T) {
	if l, _ := kernelRoutesLocal(netip.MustParseAddr("127.0.0.1")); !l {
		t.Skip("this system's route lookup knows no local routes (not Linux)")
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				a, want := netip.MustParseAddr("198.51.100.1"), false
				if (g+i)%2 == 0 {
					a, want = netip.MustParseAddr("127.0.0.9"), true
				}
				got, err := kernelRoutesLocal(a)
				if !assert.NoError(t, err) || !assert.Equal(t, want, got, a) {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// netnsEnv is set in a test binary that inNetns runs in a network
// namespace of its own, where a test may change the routes and settings.
const netnsEnv = "CONNECTPROXY_TEST_NETNS"

// inNetns reports whether the test t runs in a network namespace of its
// own. When it does not, inNetns runs t again, alone, in a new one (unshare
// -n, which needs root: without it the test says so and skips), checks
// that it passed there, and returns false.
func inNetns(t *testing.T) bool {
	t.Helper()
	own, err := os.Readlink("/proc/self/ns/net")
	if outer := os.Getenv(netnsEnv); outer != "" {
		// The test changes routes and settings: never those of the
		// namespace it was started from, which the variable names.
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(outer, "net:[") && outer != own,
			"%s=%s: this is not a namespace of its own (it is %s)", netnsEnv, outer, own)
		return true
	}
	if err != nil {
		t.Skip("needs /proc/self/ns/net:", err)
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare(1):", err)
	}
	cmd := exec.Command("unshare", "-n", os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), netnsEnv+"="+own)
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "unshare failed") {
		t.Skip("needs root for a network namespace:", strings.TrimSpace(string(out)))
	}
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "%s", out)
	return false
}

// TestAnyIPNamespace sets up, in a network namespace of its own, addresses
// of this machine that no interface lists: a prefix routed locally
// (AnyIP), ip route add local 45.45.46.0/24 dev lo. The real kernel's route
// lookup must place it on this machine: with the default policy it is
// refused, and with AllowMachine the proxy's own port on it is refused.
// It needs root (unshare -n); the test says so and skips without it.
func TestAnyIPNamespace(t *testing.T) {
	if !inNetns(t) {
		return
	}
	for _, args := range [][]string{{"link", "set", "lo", "up"}, {"route", "add", "local", "45.45.46.0/24", "dev", "lo"}} {
		out, err := exec.Command("ip", args...).CombinedOutput()
		require.NoError(t, err, "ip %v: %s", args, out)
	}
	local, err := kernelRoutesLocal(netip.MustParseAddr("45.45.46.1"))
	require.NoError(t, err)
	assert.True(t, local, "a local route's address is this machine's")
	local, err = kernelRoutesLocal(netip.MustParseAddr("45.45.47.1"))
	require.NoError(t, err)
	assert.False(t, local, "no route at all is not this machine")
	ifaddrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range ifaddrs {
		assert.False(t, a.(*net.IPNet).Contains(net.ParseIP("45.45.46.1")), "no interface lists it: %v", a)
	}

	// A service listening on every address is reachable at 45.45.46.1.
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	c, err := net.Dial("tcp", "45.45.46.1:"+port)
	require.NoError(t, err, "the route is local")
	c.Close()

	p := startProxy(t, config{Policy: mustPolicy(t, "1-65535", "")})
	status, _ := p.statusOf(t, "45.45.46.1:"+port)
	assert.Equal(t, http.StatusForbidden, status)
	assert.EqualValues(t, 1, p.snapshot().Rejected["this_machine"])

	// The proxy on every address, tunnelling to its own port through the
	// local route, with -allow-machine.
	p2 := startProxy(t, config{
		Policy:       mustPolicy(t, "1-65535", ""),
		Self:         []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:" + port)},
		AllowMachine: true,
	})
	status, _ = p2.statusOf(t, "45.45.46.1:"+port)
	assert.Equal(t, http.StatusForbidden, status)
	assert.EqualValues(t, 1, p2.snapshot().Rejected["proxy_itself"])
	assert.Zero(t, p.dials.Load()+p2.dials.Load())
}
