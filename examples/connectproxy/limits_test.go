package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hangGuard bounds a read that the test expects the proxy to end, so that
// a proxy that does not end it fails the test instead of hanging it.
const hangGuard = 10 * time.Second

// openTunnel opens a tunnel to target and checks it carries bytes.
func (p *proxyUnderTest) openTunnel(t *testing.T, target string) (net.Conn, *bufio.Reader) {
	t.Helper()
	resp, conn, br := p.rawConnect(t, connectRequest(target), "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err := io.WriteString(conn, "x")
	require.NoError(t, err)
	b, err := br.ReadByte()
	require.NoError(t, err)
	require.Equal(t, byte('x'), b)
	return conn, br
}

// waitActive waits until n tunnels are open.
func (p *proxyUnderTest) waitActive(t *testing.T, n int64) {
	t.Helper()
	require.Eventually(t, func() bool { return p.snapshot().Tunnels.Active == n }, hangGuard, time.Millisecond)
}

// TestTunnelLimits opens tunnels up to the total limit and to the
// per-client one: the next gets 503, or 429, until one is closed.
func TestTunnelLimits(t *testing.T) {
	echo := echoServer(t)
	for _, c := range []struct {
		name          string
		total, client int
		status        int
		reason        string
	}{
		{"total", 3, 10, http.StatusServiceUnavailable, "too_many_tunnels"},
		{"per client", 10, 3, http.StatusTooManyRequests, "client_limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startProxy(t, config{MaxTunnels: c.total, MaxClientTunnels: c.client})
			var conns []net.Conn
			for range 3 {
				conn, _ := p.openTunnel(t, echo)
				conns = append(conns, conn)
			}
			status, body := p.statusOf(t, echo)
			assert.Equal(t, c.status, status)
			assert.NotContains(t, body, echo)
			assert.EqualValues(t, 1, p.snapshot().Rejected[c.reason])
			assert.EqualValues(t, 3, p.dials.Load(), "the refused tunnel was not dialled")

			conns[0].Close()
			p.waitActive(t, 2)
			p.openTunnel(t, echo)
		})
	}
}

// TestIdleTunnel checks that a tunnel carrying bytes stays open past the
// idle timeout, and that one carrying none is closed after it.
func TestIdleTunnel(t *testing.T) {
	const idle = 300 * time.Millisecond
	p := startProxy(t, config{IdleTimeout: idle})
	conn, br := p.openTunnel(t, echoServer(t))
	for range 8 { // 8 × 75ms: longer than idle in all, never idle
		time.Sleep(idle / 4)
		_, err := io.WriteString(conn, "y")
		require.NoError(t, err)
		b, err := br.ReadByte()
		require.NoError(t, err, "a busy tunnel stays open")
		require.Equal(t, byte('y'), b)
	}
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(hangGuard)))
	rest, err := io.ReadAll(br)
	require.NoError(t, err, "the proxy closed the idle tunnel; the guard did not fire")
	assert.Empty(t, rest)
	p.waitActive(t, 0)
}

// TestIdleKeepAlive checks that a keep-alive connection waiting for its
// next request is closed after the server's idle timeout.
func TestIdleKeepAlive(t *testing.T) {
	p := startProxyTimeouts(t, config{}, serverTimeouts{Idle: 200 * time.Millisecond})
	conn, err := net.Dial("tcp", p.url.Host)
	require.NoError(t, err)
	defer conn.Close()
	br := bufio.NewReader(conn)
	for range 2 { // the connection is kept alive between requests
		require.Equal(t, http.StatusOK, getOn(t, conn, br, "/stats"))
	}
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(hangGuard)))
	_, err = br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the server closed the idle connection")
}

// TestHalfClose has a client send its request, some bytes, and its end
// right away, while the dial takes a while: the tunnel still opens, and
// the bytes come back.
func TestHalfClose(t *testing.T) {
	echo := echoServer(t)
	dialing := make(chan struct{})
	p := startProxy(t, config{Dial: func(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
		close(dialing)
		// Long enough for the server to see the client's end.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		return dialTCP(ctx, ap)
	}})
	conn, err := net.Dial("tcp", p.url.Host)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, connectRequest(echo)+"half")
	require.NoError(t, err)
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	<-dialing
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(hangGuard)))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	back, err := io.ReadAll(br)
	require.NoError(t, err)
	assert.Equal(t, "half", string(back))
}

// TestDialEnds checks that a dial that does not answer ends at the dial
// timeout with 504, and on Close with 503.
func TestDialEnds(t *testing.T) {
	dialing := make(chan struct{}, 1)
	hang := func(ctx context.Context, _ netip.AddrPort) (net.Conn, error) {
		dialing <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	p := startProxy(t, config{DialTimeout: 100 * time.Millisecond, Dial: hang})
	status, body := p.statusOf(t, echoServer(t))
	<-dialing
	assert.Equal(t, http.StatusGatewayTimeout, status)
	assert.Equal(t, "destination did not answer in time\n", body)

	p = startProxy(t, config{DialTimeout: time.Hour, Dial: hang})
	go func() {
		<-dialing
		p.Close()
	}()
	status, _ = p.statusOf(t, echoServer(t))
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.EqualValues(t, 1, p.snapshot().Rejected["shutdown"])
}

var (
	metricComment = regexp.MustCompile(`^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$`)
	metricSample  = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*")*\})? (\S+)$`)
)

// TestMetrics parses /metrics line by line in the text exposition format
// after a tunnel and a refusal: the proxy's own families, with their
// values, and the Go runtime's and the process's.
func TestMetrics(t *testing.T) {
	p := startProxy(t, config{})
	echo := echoServer(t)
	conn, _ := p.openTunnel(t, echo)
	conn.Close()
	p.waitActive(t, 0)
	status, _ := p.statusOf(t, "[::1]:443")
	require.Equal(t, http.StatusForbidden, status)

	resp, err := http.Get(p.url.String() + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	// client_golang adds parameters of its own, such as escaping.
	assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4; charset=utf-8"), resp.Header.Get("Content-Type"))

	types := map[string]string{}
	samples := map[string]float64{}
	own := 0
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		line := lines.Text()
		if m := metricComment.FindStringSubmatch(line); m != nil {
			if m[1] == "TYPE" {
				require.Contains(t, []string{"counter", "gauge", "summary", "histogram"}, m[3], line)
				require.NotContains(t, types, m[2], "one TYPE per family")
				types[m[2]] = m[3]
			}
			continue
		}
		m := metricSample.FindStringSubmatch(line)
		require.NotNil(t, m, "line %q", line)
		family := m[1]
		if _, ok := types[family]; !ok {
			// A summary's or a histogram's _sum, _count and _bucket.
			for _, suffix := range []string{"_sum", "_count", "_bucket"} {
				if base, ok := strings.CutSuffix(family, suffix); ok {
					family = base
					break
				}
			}
			require.Contains(t, []string{"summary", "histogram"}, types[family], "sample %q before its TYPE", line)
		}
		v, err := strconv.ParseFloat(m[4], 64)
		require.NoError(t, err, line)
		require.NotContains(t, samples, m[1]+m[2], "duplicate %q", line)
		samples[m[1]+m[2]] = v
		if types[family] == "counter" {
			assert.True(t, strings.HasSuffix(m[1], "_total"), line)
		}
		if strings.HasPrefix(m[1], "connectproxy_") {
			own++
		}
	}
	require.NoError(t, lines.Err())
	// Labels are in the order of their names, as client_golang writes
	// them.
	for name, want := range map[string]float64{
		`connectproxy_tunnels_total`:                        1,
		`connectproxy_tunnels_active`:                       0,
		`connectproxy_tunnel_bytes_total{direction="up"}`:   1,
		`connectproxy_tunnel_bytes_total{direction="down"}`: 1,
		`connectproxy_refusals_total{reason="loopback"}`:    1,
		`connectproxy_refusals_total{reason="port"}`:        0,
		`connectproxy_first_seen_total{kind="destination"}`: 1,
		`connectproxy_first_seen_total{kind="client"}`:      1,
		`connectproxy_repeats_total{kind="destination"}`:    0,
		// The filters, as bloomprom reports any Rotating.
		`mitzbloom_filter_up{filter="destinations"}`:                   1,
		`mitzbloom_filter_rotations_total{filter="destinations"}`:      0,
		`mitzbloom_filter_early_rotations_total{filter="clients"}`:     0,
		`mitzbloom_filter_expected_fpp{filter="clients"}`:              p.seen.clients.Stats().ExpectedFPP,
		`mitzbloom_filter_expected_insertions{filter="clients"}`:       float64(2 * p.cfg.ExpectedInsertions),
		`mitzbloom_filter_target_fpp{filter="clients"}`:                1 - (1-p.cfg.FPP)*(1-p.cfg.FPP),
		`mitzbloom_filter_generation_period_seconds{filter="clients"}`: p.cfg.Window.Seconds(),
		`mitzbloom_filter_approximate_elements{filter="destinations"}`: 1,
		`mitzbloom_filter_bitsize{filter="destinations"}`:              float64(p.seen.dests.Stats().BitSize),
		`go_info{version="` + runtime.Version() + `"}`:                 1,
	} {
		if assert.Contains(t, samples, name) {
			assert.Equal(t, want, samples[name], name)
		}
	}
	assert.InDelta(t, p.seen.dests.Stats().Current.FillRatio/2, samples[`mitzbloom_filter_fill_ratio{filter="destinations"}`], 1e-12,
		"one tunnel's destination in the current generation, none in the previous")
	assert.Positive(t, samples[`mitzbloom_filter_fill_ratio{filter="destinations"}`])
	assert.Equal(t, 4+int(refusals-1)+2*2+6, own, "every sample of the proxy's is checked for form")
	assert.Positive(t, samples["go_goroutines"])
	if runtime.GOOS == "linux" {
		assert.Positive(t, samples["process_resident_memory_bytes"])
		assert.InDelta(t, time.Now().Unix(), samples["process_start_time_seconds"], 3600, "the process started within the hour")
	}
}

// TestSlowloris opens a few hundred connections that send part of a
// request and then nothing: a normal tunnel still works among them, and
// the server closes them all after its header timeout.
func TestSlowloris(t *testing.T) {
	p := startProxyTimeouts(t, config{}, serverTimeouts{ReadHeader: time.Second})
	echo := echoServer(t)
	const slow = 300
	conns := make([]net.Conn, slow)
	for i := range conns {
		c, err := net.Dial("tcp", p.url.Host)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		_, err = io.WriteString(c, "CONNECT "+echo+" HTTP/1.1\r\nHost: ")
		require.NoError(t, err)
		conns[i] = c
	}
	conn, br := p.openTunnel(t, echo)
	var wg sync.WaitGroup
	closed := make([]bool, slow)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(hangGuard))
			b, err := io.ReadAll(c)
			// The server gives up on the request with 408 or by closing.
			closed[i] = err == nil && (len(b) == 0 || strings.HasPrefix(string(b), "HTTP/1.1 408"))
		}()
	}
	wg.Wait()
	for i, ok := range closed {
		require.True(t, ok, "slow connection %d was not shed", i)
	}
	// The tunnel opened among them is a tunnel, not a request: the
	// header timeout does not apply to it.
	_, err := io.WriteString(conn, "z")
	require.NoError(t, err)
	b, err := br.ReadByte()
	require.NoError(t, err)
	assert.Equal(t, byte('z'), b)
	p.openTunnel(t, echo)
}

// TestConcurrentLimit races many clients for a few tunnels: exactly the
// limit get one while they are all held open.
func TestConcurrentLimit(t *testing.T) {
	const limit, clients = 5, 40
	p := startProxy(t, config{MaxClientTunnels: limit})
	echo := echoServer(t)
	var answered, hold sync.WaitGroup
	answered.Add(clients)
	hold.Add(1)
	statuses := make([]int, clients)
	var done sync.WaitGroup
	for i := range clients {
		done.Add(1)
		go func() {
			defer done.Done()
			conn, err := net.Dial("tcp", p.url.Host)
			if !assert.NoError(t, err) {
				answered.Done()
				return
			}
			defer conn.Close()
			_, err = io.WriteString(conn, connectRequest(echo))
			assert.NoError(t, err)
			resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodConnect})
			if assert.NoError(t, err) {
				statuses[i] = resp.StatusCode
			}
			answered.Done()
			hold.Wait() // keep the tunnel open until every client has its answer
		}()
	}
	answered.Wait()
	hold.Done()
	done.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	assert.Equal(t, map[int]int{http.StatusOK: limit, http.StatusTooManyRequests: clients - limit}, count)
	assert.EqualValues(t, clients-limit, p.snapshot().Rejected["client_limit"])
}
