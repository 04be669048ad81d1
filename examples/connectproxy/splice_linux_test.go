package main

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTunnelsSplice checks that a tunnel between TCP connections moves its
// bytes through the proxy's pipes, and gives them back once done.
func TestTunnelsSplice(t *testing.T) {
	for len(pipes) > 0 {
		(<-pipes).close()
	}
	// Both directions of the tunnel make pipes, each in its goroutine.
	var made atomic.Int64
	pipe2 = func(fds []int, flags int) error {
		made.Add(1)
		return syscall.Pipe2(fds, flags)
	}
	t.Cleanup(func() { pipe2 = syscall.Pipe2 })
	p := startProxy(t, config{})
	echoBytes(t, p, "", strings.Repeat("spliced ", 300_000))
	p.waitTunnels()
	assert.Positive(t, made.Load(), "pipes were made")
	assert.Equal(t, min(int(made.Load()), cap(pipes)), len(pipes), "and kept empty for the next tunnel")
}

// TestTunnelsWithoutPipes checks that a tunnel still carries its bytes
// when no pipe can be made, as when the process is out of descriptors.
func TestTunnelsWithoutPipes(t *testing.T) {
	for len(pipes) > 0 {
		(<-pipes).close()
	}
	pipe2 = func([]int, int) error { return syscall.EMFILE }
	t.Cleanup(func() { pipe2 = syscall.Pipe2 })
	p := startProxy(t, config{})
	echoBytes(t, p, "", strings.Repeat("copied ", 300_000))
	p.waitTunnels()
	s := p.snapshot()
	assert.EqualValues(t, 2_100_000, s.Tunnels.BytesUp)
	assert.EqualValues(t, 2_100_000, s.Tunnels.BytesDown)
}

// TestIdleTunnelsHoldNoPipe checks that a tunnel that carried bytes both
// ways and waits for more has given its pipes back, while it is open.
func TestIdleTunnelsHoldNoPipe(t *testing.T) {
	for len(pipes) > 0 {
		(<-pipes).close()
	}
	var made atomic.Int64
	pipe2 = func(fds []int, flags int) error {
		made.Add(1)
		return syscall.Pipe2(fds, flags)
	}
	t.Cleanup(func() { pipe2 = syscall.Pipe2 })
	p := startProxy(t, config{})
	resp, conn, br := p.rawConnect(t, connectRequest(echoServer(t)), "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	payload := strings.Repeat("held? ", 300_000)
	go func() { _, _ = io.WriteString(conn, payload) }()
	got := make([]byte, len(payload))
	_, err := io.ReadFull(br, got)
	require.NoError(t, err)
	require.Equal(t, payload, string(got))
	assert.Positive(t, made.Load(), "pipes were made")
	assert.Eventually(t, func() bool { return int64(len(pipes)) == made.Load() },
		hangGuard, time.Millisecond, "the open tunnel gave back every pipe it made")
	conn.Close()
	p.waitTunnels()
}
