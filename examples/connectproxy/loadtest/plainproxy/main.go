// Plainproxy is the plainest HTTP CONNECT proxy Go makes: a goroutine per
// client connection reads the request, dials its target, answers 200 and
// copies the bytes each way with io.Copy between the two *net.TCPConn,
// which splices on Linux. It checks nothing and limits nothing, and keeps
// TCP keep-alives off as connectproxy does.
//
// It is not a proxy to run: loadtest measures it beside connectproxy and
// its peers (peers.sh's "plain") as what any proxy written in Go can do on
// the machine, whose scheduler and network poller it shares with
// connectproxy.
//
// Usage:
//
//	go run ./examples/connectproxy/loadtest/plainproxy -listen 127.0.0.1:18096
package main

import (
	"bufio"
	"context"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:18096", "the `address` to listen on")
	flag.Parse()
	lc := net.ListenConfig{KeepAlive: -1}
	ln, err := lc.Listen(context.Background(), "tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(serve(ln))
}

// serve accepts client connections on ln and tunnels each in a goroutine
// of its own, until Accept fails.
func serve(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go tunnel(c.(*net.TCPConn))
	}
}

var dialer = net.Dialer{KeepAlive: -1}

// tunnel reads a CONNECT request from c, dials its target and copies both
// ways until both sides have closed theirs.
func tunnel(c *net.TCPConn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		return
	}
	conn, err := dialer.Dial("tcp", req.Host)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	dst := conn.(*net.TCPConn)
	defer dst.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// Bytes the client sent right behind its request.
	early, _ := br.Peek(br.Buffered())
	if _, err := dst.Write(early); err != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(dst, c)
		_ = dst.CloseWrite()
	}()
	_, _ = io.Copy(c, dst)
	_ = c.CloseWrite()
	wg.Wait()
}
