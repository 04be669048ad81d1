package main

import (
	"bufio"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func (p *proxyUnderTest) conns() connJSON { return p.snapshot().Connections["proxy"] }

// waitConns waits until n client connections are open.
func (p *proxyUnderTest) waitConns(t *testing.T, n int64) {
	t.Helper()
	require.Eventually(t, func() bool { return p.conns().Active == n }, hangGuard, time.Millisecond)
}

// waitIdle waits until n client connections are open and idle.
func (p *proxyUnderTest) waitIdle(t *testing.T, n int64) {
	t.Helper()
	require.Eventually(t, func() bool { s := p.conns(); return s.Active == n && s.Idle == n }, hangGuard, time.Millisecond)
}

// dialIdle opens a connection to the proxy that sends nothing.
func (p *proxyUnderTest) dialIdle(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.url.Host)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// getOn sends GET path on c, keeping it alive, and returns the status.
func getOn(t *testing.T, c net.Conn, br *bufio.Reader, path string) int {
	t.Helper()
	_, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// assertClosed checks that the proxy closed c, and closedNot that it did
// not within a moment.
func assertClosed(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(hangGuard)))
	_, err := c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, msg)
}

func assertOpen(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
	_, err := c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded, msg)
}

// TestMaxConnsShedsIdle fills the cap with idle connections, new ones and
// one between keep-alive requests: each new connection takes the place of
// the one idle longest, and gets its answer.
func TestMaxConnsShedsIdle(t *testing.T) {
	p := startProxyConns(t, config{}, serverTimeouts{}, 3)
	a := p.dialIdle(t)
	p.waitIdle(t, 1)
	b := p.dialIdle(t)
	p.waitIdle(t, 2)
	k := p.dialIdle(t)
	assert.Equal(t, http.StatusOK, getOn(t, k, bufio.NewReader(k), "/stats"))
	p.waitIdle(t, 3) // k too, between requests

	// The cap is reached and all three are idle: a new client gets in,
	// and a, idle longest, is closed.
	c := p.dialIdle(t)
	assert.Equal(t, http.StatusOK, getOn(t, c, bufio.NewReader(c), "/stats"))
	assertClosed(t, a, "a was idle longest")
	p.waitIdle(t, 3)
	assertOpen(t, b, "b stays")
	assertOpen(t, k, "k stays")

	// Then b, then k: c's request made it the most recently idle.
	d := p.dialIdle(t)
	assert.Equal(t, http.StatusOK, getOn(t, d, bufio.NewReader(d), "/stats"))
	assertClosed(t, b, "b was idle longest")
	p.waitIdle(t, 3)
	assertOpen(t, k, "k stays")
	e := p.dialIdle(t)
	assert.Equal(t, http.StatusOK, getOn(t, e, bufio.NewReader(e), "/stats"))
	assertClosed(t, k, "k was idle longest")
	p.waitIdle(t, 3)
	assertOpen(t, c, "c stays")

	s := p.conns()
	assert.Equal(t, connJSON{Max: 3, Active: 3, Idle: 3, Accepted: 6, Refused: 0, Shed: 3}, s)
}

// TestMaxConnsShedsPartialRequests fills the cap with connections that
// sent part of a request's headers and then nothing, as slowloris does: the
// server has no request of theirs yet, so they are idle, and a client with
// a whole request takes the place of the one waiting longest.
func TestMaxConnsShedsPartialRequests(t *testing.T) {
	p := startProxyConns(t, config{}, serverTimeouts{}, 2)
	var slow []net.Conn
	for i := range 2 {
		c := p.dialIdle(t)
		_, err := io.WriteString(c, "GET /stats HTTP/1.1\r\nHost: x\r\n")
		require.NoError(t, err)
		p.waitIdle(t, int64(i+1))
		slow = append(slow, c)
	}
	c := p.dialIdle(t)
	assert.Equal(t, http.StatusOK, getOn(t, c, bufio.NewReader(c), "/stats"))
	assertClosed(t, slow[0], "the first partial request waited longest")
	assertOpen(t, slow[1], "the second stays")
	s := p.conns()
	assert.Equal(t, connJSON{Max: 2, Active: 2, Idle: 2, Accepted: 3, Refused: 0, Shed: 1}, s)
}

// TestMaxConnsRefusesBusy fills the cap with tunnels, which are never idle:
// a new connection is refused at once with 503, and counted, until a tunnel
// ends.
func TestMaxConnsRefusesBusy(t *testing.T) {
	echo := echoServer(t)
	p := startProxyConns(t, config{}, serverTimeouts{}, 2)
	t1, _ := p.openTunnel(t, echo)
	t2, t2r := p.openTunnel(t, echo)

	c := p.dialIdle(t)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(hangGuard)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "the refusal is a 503, when the client has sent nothing yet")
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "too many connections, try later\n", string(body))
	assert.True(t, resp.Close, "Connection: close")
	assert.Equal(t, connJSON{Max: 2, Active: 2, Idle: 0, Accepted: 2, Refused: 1}, p.conns())

	// The tunnels are unharmed, and when one ends, a new client gets in.
	_, err = io.WriteString(t2, "y")
	require.NoError(t, err)
	got, err := t2r.ReadByte()
	require.NoError(t, err)
	assert.Equal(t, byte('y'), got)
	t1.Close()
	p.waitConns(t, 1)
	t3, _ := p.openTunnel(t, echo)
	t3.Close()
	p.waitConns(t, 1)

	m := p.metrics(t)
	assert.EqualValues(t, 1, m[`connectproxy_connections_refused_total{listener="proxy"}`])
	assert.EqualValues(t, 2, m[`connectproxy_connections_max{listener="proxy"}`])
	assert.EqualValues(t, 4, m[`connectproxy_connections_accepted_total{listener="proxy"}`], "t1, t2, t3 and this one")
}

// getClose sends GET path to addr on a connection of its own, which it
// closes, and returns the status and body.
func getClose(t *testing.T, addr, path string) (int, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(hangGuard)))
	_, err = io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

// metrics fetches /metrics and returns its samples by name and labels.
func (p *proxyUnderTest) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	status, body := getClose(t, p.url.Host, "/metrics")
	require.Equal(t, http.StatusOK, status)
	samples := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if m := metricSample.FindStringSubmatch(line); m != nil {
			v, err := strconv.ParseFloat(m[4], 64)
			require.NoError(t, err)
			samples[m[1]+m[2]] = v
		}
	}
	return samples
}

// isDropped reports whether err is what a client sees when the proxy closes
// its connection: an end, or a reset when it had sent bytes the proxy did
// not read; not a timeout.
func isDropped(err error) bool {
	var op *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &op) && !op.Timeout()
}

// TestMaxConnsConcurrent has many clients connect, ask and leave at once
// through a cap of 4: every connection is let in or refused, the count
// never passes the cap, and it comes back to 0.
func TestMaxConnsConcurrent(t *testing.T) {
	const limit, clients, rounds = 4, 16, 25
	n := clients * rounds
	if testing.Short() {
		n = clients * 5
	}
	p := startProxyConns(t, config{}, serverTimeouts{}, limit)
	stop := make(chan struct{})
	var over atomic.Int64
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if a := p.conns().Active; a > limit {
				over.Store(a)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	var ok, refused, dropped atomic.Int64
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n / clients {
				c, err := net.Dial("tcp", p.url.Host)
				if !assert.NoError(t, err) {
					return
				}
				_ = c.SetDeadline(time.Now().Add(hangGuard))
				_, err = io.WriteString(c, "GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
				var b []byte
				if err == nil {
					b, err = io.ReadAll(c)
				}
				c.Close()
				switch s := string(b); {
				case strings.HasPrefix(s, "HTTP/1.1 200 "):
					ok.Add(1)
				case strings.HasPrefix(s, "HTTP/1.1 503 "):
					refused.Add(1)
				case err == nil && s == "", err != nil && isDropped(err):
					dropped.Add(1) // refused or shed before the reply was read
				default:
					t.Errorf("client %d: %q, %v", i, s, err)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	assert.Zero(t, over.Load(), "open connections never pass the cap")
	p.waitConns(t, 0)
	s := p.conns()
	assert.EqualValues(t, n, s.Accepted+s.Refused, "every connection is let in or refused")
	assert.EqualValues(t, n, ok.Load()+refused.Load()+dropped.Load())
	assert.Positive(t, ok.Load())
	t.Logf("%d answered, %d refused with 503, %d closed before an answer; proxy: %+v", ok.Load(), refused.Load(), dropped.Load(), s)
}

func TestBudget(t *testing.T) {
	for _, c := range []struct {
		nofile           int
		admin            bool
		tunnels, conns   int
		wantT, wantC     int
		wantErrSubstring string
	}{
		{nofile: 256, wantT: 19, wantC: 97},
		{nofile: 1024, wantT: 96, wantC: 480},
		{nofile: 1024, admin: true, wantT: 94, wantC: 474},
		{nofile: 20000, wantT: 1024, wantC: 14816},
		{nofile: math.MaxInt32, wantT: 1024, wantC: 16384}, // as run passes for no limit
		{nofile: 1024, tunnels: 100, conns: 400, wantT: 100, wantC: 400},
		{nofile: 1024, tunnels: 100, wantT: 100, wantC: 460},
		{nofile: 1024, conns: 100, wantT: 96, wantC: 100},
		{nofile: 1024, tunnels: 1024, wantErrSubstring: "the limit (ulimit -n) is 1024"},
		{nofile: 1024, tunnels: 100, conns: 700, wantErrSubstring: "700 connections and 100 tunnels need 1200 descriptors besides the 64"},
		{nofile: 1024, conns: 900, wantErrSubstring: "900 connections and 96 tunnels need 1380 descriptors besides the 64"},
		{nofile: 66, wantErrSubstring: "the limit (ulimit -n) is 66"},
	} {
		tunnels, conns, err := budget(c.nofile, c.admin, c.tunnels, c.conns)
		if c.wantErrSubstring != "" {
			if assert.Error(t, err, "%+v", c) {
				assert.Contains(t, err.Error(), c.wantErrSubstring)
			}
			continue
		}
		if assert.NoError(t, err, "%+v", c) {
			assert.Equal(t, [2]int{c.wantT, c.wantC}, [2]int{tunnels, conns}, "%+v", c)
			used := reservedFDs + conns + fdsPerTunnel*tunnels
			if c.admin {
				used += adminConns
			}
			assert.LessOrEqual(t, used, c.nofile, "%+v", c)
		}
	}
}
