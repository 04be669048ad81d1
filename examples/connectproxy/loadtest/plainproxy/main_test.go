package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
)

// TestTunnel opens a tunnel through the proxy to an echo server, sends
// bytes, some right behind the request, closes its side and reads them
// back.
func TestTunnel(t *testing.T) {
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln
	}
	echo := listen()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	proxy := listen()
	go func() { _ = serve(proxy) }()

	c, err := net.Dial("tcp", proxy.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	target := echo.Addr().String()
	const early = "sent right behind the request; "
	if _, err := io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n"+early); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	const msg = "through the tunnel and back"
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	back, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != early+msg {
		t.Errorf("read back %q, want %q", back, early+msg)
	}
}
