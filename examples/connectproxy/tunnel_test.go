package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoBytes sends early right behind a CONNECT request, before the proxy's
// answer, then late, through a tunnel to an echo server, and checks that
// every byte comes back in order.
func echoBytes(t *testing.T, p *proxyUnderTest, early, late string) {
	t.Helper()
	echo := echoServer(t)
	resp, conn, br := p.rawConnect(t, connectRequest(echo), early)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var got bytes.Buffer
	read := make(chan error)
	go func() {
		_, err := io.Copy(&got, br)
		read <- err
	}()
	_, err := io.WriteString(conn, late)
	require.NoError(t, err)
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	require.NoError(t, <-read)
	assert.Equal(t, len(early)+len(late), got.Len())
	assert.True(t, got.String() == early+late, "the bytes came back as sent")
}

// opaqueConn is a TCP connection that the tunnels cannot splice from, as
// they do not know its type, but can half-close.
type opaqueConn struct{ *net.TCPConn }

// TestTunnelsThroughBuffers checks the tunnels between connections that
// are not *net.TCPConn, which copy through pooled buffers (bufferCopier):
// every byte arrives, and the counts are exact.
func TestTunnelsThroughBuffers(t *testing.T) {
	p := startProxy(t, config{Dial: func(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
		c, err := dialTCP(ctx, ap)
		if err != nil {
			return nil, err
		}
		return opaqueConn{c.(*net.TCPConn)}, nil
	}})
	payload := strings.Repeat("buffered ", 200_000)
	echoBytes(t, p, "", payload)
	p.waitTunnels()
	s := p.snapshot()
	assert.EqualValues(t, len(payload), s.Tunnels.BytesUp)
	assert.EqualValues(t, len(payload), s.Tunnels.BytesDown)
}
