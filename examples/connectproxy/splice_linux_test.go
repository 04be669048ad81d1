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
	made := countPipes(t)
	p := startProxy(t, config{})
	echoBytes(t, p, "", strings.Repeat("spliced ", 300_000))
	p.waitTunnels()
	assert.Positive(t, made.Load(), "pipes were made")
	assert.Equal(t, min(int(made.Load()), cap(pipes)), len(pipes), "and kept empty for the next tunnel")
}

// TestTunnelsWithoutPipes checks that a tunnel still carries its bytes
// when no pipe can be made, as when the process is out of descriptors.
func TestTunnelsWithoutPipes(t *testing.T) {
	setPipe2(t, func([]int, int) error { return syscall.EMFILE })
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
	made := countPipes(t)
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

// setPipe2 empties the pool of pipes and makes them with f until t ends.
func setPipe2(t *testing.T, f func(fds []int, flags int) error) {
	for len(pipes) > 0 {
		(<-pipes).close()
	}
	pipe2 = f
	t.Cleanup(func() { pipe2 = syscall.Pipe2 })
}

// countPipes empties the pool of pipes and counts those made until t ends.
// The count is atomic: both directions of a tunnel make pipes, each in its
// goroutine.
func countPipes(t *testing.T) *atomic.Int64 {
	made := new(atomic.Int64)
	setPipe2(t, func(fds []int, flags int) error {
		made.Add(1)
		return syscall.Pipe2(fds, flags)
	})
	return made
}
