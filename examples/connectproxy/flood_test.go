//go:build linux || darwin

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFloodUnderDescriptorLimit runs the program in a process allowed 256
// open files, and floods it with idle connections, 20 times its cap: a
// CONNECT still gets its tunnel, /stats still answers, a tunnel opened
// before the flood still carries bytes, and the proxy never runs out of
// descriptors.
func TestFloodUnderDescriptorLimit(t *testing.T) {
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	c := startChild(t, []string{childNofileEnv + "=256"},
		"-listen", "127.0.0.1:0", "-allow-ports", port, "-allow-hosts", "127.0.0.1/32", "-allow-machine")
	attrs := c.listening(t)
	require.Equal(t, "256", attrs["open-file-limit"])
	require.Equal(t, "19", attrs["max-tunnels"], "(256 - 64) / (2×5)")
	require.Equal(t, "97", attrs["max-conns"], "256 - 64 - 5×19")
	addr := attrs["addr"]

	tunnel := func() (net.Conn, *bufio.Reader) {
		t.Helper()
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		require.NoError(t, conn.SetDeadline(time.Now().Add(hangGuard)))
		_, err = io.WriteString(conn, connectRequest(echo)+"ping")
		require.NoError(t, err)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		back := make([]byte, 4)
		_, err = io.ReadFull(br, back)
		require.NoError(t, err)
		require.Equal(t, "ping", string(back))
		return conn, br
	}
	stats := func() statsJSON {
		t.Helper()
		status, body := getClose(t, addr, "/stats")
		require.Equal(t, http.StatusOK, status)
		var s statsJSON
		require.NoError(t, json.Unmarshal(body, &s))
		return s
	}

	before, beforeR := tunnel()
	const flood = 2000
	for round := range 2 {
		for range flood {
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			t.Cleanup(func() { conn.Close() })
		}
		tunnel()
		s := stats().Connections["proxy"]
		t.Logf("after flood %d: %+v", round+1, s)
		assert.Equal(t, 97, s.Max)
		assert.LessOrEqual(t, s.Active, int64(s.Max))
		assert.GreaterOrEqual(t, s.Shed, int64((round+1)*flood-s.Max), "idle connections make room")
		assert.Zero(t, s.Refused, "there was always an idle one to close")
	}
	_, err := io.WriteString(before, "more")
	require.NoError(t, err)
	back := make([]byte, 4)
	_, err = io.ReadFull(beforeR, back)
	require.NoError(t, err)
	assert.Equal(t, "more", string(back), "tunnels are never shed")
	assert.EqualValues(t, 3, stats().Tunnels.Total)

	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, c.wait())
	assert.NotContains(t, c.log(), "too many open files")
}

// TestDescriptorLimitFlags checks that caps that do not fit in the
// descriptor limit are a mistake in the command line.
func TestDescriptorLimitFlags(t *testing.T) {
	for _, args := range [][]string{{"-max-conns", "500"}, {"-max-tunnels", "40"}} {
		c := startChild(t, []string{childNofileEnv + "=256"}, append([]string{"-listen", "127.0.0.1:0"}, args...)...)
		assert.Equal(t, 2, c.wait(), "%q", args)
		assert.Contains(t, c.log(), "-max-conns, -max-tunnels: ", "%q", args)
		assert.Contains(t, c.log(), "the limit (ulimit -n) is 256", "%q", args)
	}
	c := startChild(t, []string{childNofileEnv + "=256"}, "-listen", "127.0.0.1:0", "-max-tunnels", "8", "-max-conns", "150")
	attrs := c.listening(t)
	assert.Equal(t, "150", attrs["max-conns"])
	assert.Equal(t, "8", attrs["max-tunnels"])
	n, _ := strconv.Atoi(attrs["open-file-limit"])
	assert.Equal(t, 256, n)
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, c.wait())
	assert.False(t, strings.Contains(c.log(), "level=ERROR"))
}
