package main

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blackHole is a dialer for which the addresses in dead drop every SYN: a
// dial to them ends only when its context does, which it counts. Others are
// dialled for real.
type blackHole struct {
	dead      map[string]bool // IP addresses, as netip.Addr.String gives them
	abandoned atomic.Int64    // dials to dead addresses that ended
}

func (b *blackHole) dial(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	if b.dead[ap.Addr().String()] {
		<-ctx.Done()
		b.abandoned.Add(1)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: ctx.Err()}
	}
	return dialTCP(ctx, ap)
}

// TestAnswersArrive checks that a dial that outlasts the server's read and
// write timeouts is still answered: 504 for an address that drops SYNs, 502
// for one that is unreachable, each delivered to the client, not only
// counted.
func TestAnswersArrive(t *testing.T) {
	const serverTimeout = 100 * time.Millisecond
	const dialTimeout = 3 * serverTimeout
	bh := &blackHole{dead: map[string]bool{"127.0.0.3": true}}
	p := startProxyTimeouts(t, config{
		DialTimeout:  dialTimeout,
		Policy:       mustPolicy(t, "443", "127.0.0.0/8"),
		AllowMachine: true,
		Dial: func(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
			if ap == netip.MustParseAddrPort("127.0.0.4:443") {
				// A router's "no route to host", after a while.
				time.Sleep(dialTimeout / 2)
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.EHOSTUNREACH}
			}
			return bh.dial(ctx, ap)
		},
	}, serverTimeouts{ReadHeader: serverTimeout})
	start := time.Now()
	status, body := p.statusOf(t, "127.0.0.3:443")
	assert.Equal(t, http.StatusGatewayTimeout, status)
	assert.Equal(t, "destination did not answer in time\n", body)
	assert.GreaterOrEqual(t, time.Since(start), dialTimeout, "answered after the dial timeout")
	status, body = p.statusOf(t, "127.0.0.4:443")
	assert.Equal(t, http.StatusBadGateway, status)
	assert.Equal(t, "cannot reach destination\n", body)
	s := p.snapshot()
	assert.EqualValues(t, 1, s.Rejected["timeout"])
	assert.EqualValues(t, 1, s.Rejected["unreachable"])
}

// TestHappyEyeballs checks that a name with a dead address and a live one
// reaches the live one, whichever comes first and whatever the families,
// long before the dial timeout (an hour here), and that the dead attempt is
// abandoned once the live one connects.
func TestHappyEyeballs(t *testing.T) {
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	bh := &blackHole{dead: map[string]bool{"127.0.0.3": true, "::1": true}}
	p := startProxy(t, config{
		DialTimeout: time.Hour,
		Dial:        bh.dial,
		Resolver: fakeResolver{
			"dead-first.test": addrs("127.0.0.3", "127.0.0.1"),
			"six-dead.test":   addrs("::1", "127.0.0.1"),
		},
		Policy:       mustPolicy(t, port, "127.0.0.0/8,::1"),
		AllowMachine: true,
	})
	for _, name := range []string{"dead-first.test", "six-dead.test"} {
		conn, _ := p.openTunnel(t, name+":"+port)
		conn.Close()
	}
	require.Eventually(t, func() bool { return bh.abandoned.Load() == 2 }, hangGuard, time.Millisecond, "the dead attempts are cancelled")
	assert.EqualValues(t, 4, p.dials.Load())
	assert.EqualValues(t, 2, p.snapshot().Tunnels.Total)
}

// TestAttemptTimeouts checks that each address has a share of the dial
// timeout: with two dead addresses in the two attempts in flight before a
// live one, the live one is reached once the first dead one's share has
// passed, within the dial timeout; and that when every address is dead the
// answer is 504.
func TestAttemptTimeouts(t *testing.T) {
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	bh := &blackHole{dead: map[string]bool{"127.0.0.3": true, "127.0.0.4": true}}
	p := startProxy(t, config{
		DialTimeout: 3 * minAttempt,
		Dial:        bh.dial,
		Resolver: fakeResolver{
			"two-dead.test": addrs("127.0.0.3", "127.0.0.4", "127.0.0.1"),
			"all-dead.test": addrs("127.0.0.3", "127.0.0.4"),
		},
		Policy:       mustPolicy(t, port, "127.0.0.0/8"),
		AllowMachine: true,
	})
	conn, _ := p.openTunnel(t, "two-dead.test:"+port)
	conn.Close()
	assert.EqualValues(t, 3, p.dials.Load())

	p2 := startProxy(t, config{
		DialTimeout:  300 * time.Millisecond,
		Dial:         bh.dial,
		Resolver:     fakeResolver{"all-dead.test": addrs("127.0.0.3", "127.0.0.4")},
		Policy:       mustPolicy(t, port, "127.0.0.0/8"),
		AllowMachine: true,
	})
	status, _ := p2.statusOf(t, "all-dead.test:"+port)
	assert.Equal(t, http.StatusGatewayTimeout, status)
	assert.EqualValues(t, 2, p2.dials.Load(), "both addresses tried")
}

// TestInterleave checks the order of RFC 8305: the first address's family
// first, then the families in turn.
func TestInterleave(t *testing.T) {
	assert.Equal(t, addrs("2001:db8::1", "192.0.2.1", "2001:db8::2", "192.0.2.2", "2001:db8::3"),
		interleave(addrs("2001:db8::1", "2001:db8::2", "2001:db8::3", "192.0.2.1", "192.0.2.2")))
	assert.Equal(t, addrs("192.0.2.1", "2001:db8::1", "192.0.2.2"),
		interleave(addrs("192.0.2.1", "192.0.2.2", "2001:db8::1")))
	assert.Equal(t, addrs("192.0.2.1"), interleave(addrs("192.0.2.1")))
}

// TestDialSharesPorts checks that dialTCP lets the kernel choose the local
// port at connect, which shares a port among connections to different
// destinations: in a network namespace with two ephemeral ports, three
// connections to three listeners are open at once. A dial that binds
// port 0 first takes a port of its own, and the third fails.
func TestDialSharesPorts(t *testing.T) {
	if !inNetns(t) {
		return
	}
	out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput()
	require.NoError(t, err, "ip link set lo up: %s", out)
	require.NoError(t, os.WriteFile("/proc/sys/net/ipv4/ip_local_port_range", []byte("40000 40001"), 0o644))
	ctx := context.Background()
	for i := range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(41000+i))
		require.NoError(t, err)
		defer ln.Close()
		c, err := dialTCP(ctx, ln.Addr().(*net.TCPAddr).AddrPort())
		require.NoError(t, err, "connection %d of 3, with 2 ephemeral ports", i+1)
		defer c.Close()
	}
}
