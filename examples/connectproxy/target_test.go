package main

import (
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTargetAuthorityForm sends CONNECT targets that are more than
// host:port, each with a valid Host header: net/http makes a URL of them
// whose Host is the echo server, but the proxy reads the target as sent,
// and answers 400 without dialling.
func TestTargetAuthorityForm(t *testing.T) {
	p := startProxy(t, config{})
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	for _, target := range []string{
		"a:443@" + echo,             // userinfo
		"user@" + echo,              // userinfo
		echo + "/x",                 // path
		echo + "?q",                 // query
		echo + "/?q#f",              // path, query and fragment
		"%31%32%37.0.0.1:" + port,   // percent-encoding
		"127.0.0.1%2e:" + port,      // percent-encoded dot
		"[::ffff:127.0.0.1]" + port, // no colon before the port
	} {
		resp, _, _ := p.rawConnect(t, "CONNECT "+target+" HTTP/1.1\r\nHost: "+echo+"\r\n\r\n", "")
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, target)
	}
	assert.Zero(t, p.dials.Load())
	assert.Zero(t, p.snapshot().Tunnels.Total)
}
