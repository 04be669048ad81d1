package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// The benchmarks run the proxy, its clients and the servers behind it in
// one process, over loopback, and compare each figure through the proxy
// with the same work done directly. README.md gives the commands and the
// figures.

// tunnelOrDirect opens a connection to target, through p if p is not nil,
// and checks it carries a byte.
func tunnelOrDirect(b *testing.B, p *proxyUnderTest, target string) (net.Conn, *bufio.Reader) {
	c, br, err := tryTunnel(p, target)
	if err != nil {
		b.Fatal(err)
	}
	return c, br
}

// tryTunnel is tunnelOrDirect for goroutines other than the benchmark's,
// which must not call b.Fatal.
func tryTunnel(p *proxyUnderTest, target string) (net.Conn, *bufio.Reader, error) {
	addr := target
	if p != nil {
		addr = p.url.Host
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	req := "x"
	if p != nil {
		req = connectRequest(target) + "x"
	}
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, nil, err
	}
	br := bufio.NewReader(c)
	if p != nil {
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil || resp.StatusCode != http.StatusOK {
			c.Close()
			return nil, nil, fmt.Errorf("CONNECT: %v %v", resp, err)
		}
	}
	if x, err := br.ReadByte(); err != nil || x != 'x' {
		c.Close()
		return nil, nil, fmt.Errorf("the byte back: %q %v", x, err)
	}
	return c, br, nil
}

// BenchmarkTunnel opens a tunnel (CONNECT, 200, one byte each way) and
// closes it, one after another from one client, or from 32 clients at
// once; direct does the same without the proxy.
func BenchmarkTunnel(b *testing.B) {
	for _, clients := range []int{1, 32} {
		for _, via := range []string{"direct", "proxy"} {
			b.Run(fmt.Sprintf("clients=%d/via=%s", clients, via), func(b *testing.B) {
				echo := echoServer(b)
				var p *proxyUnderTest
				if via == "proxy" {
					p = startProxyConns(b, config{MaxTunnels: 1 << 20, MaxClientTunnels: 1 << 20}, serverTimeouts{}, maxDefaultConns)
				}
				b.ReportAllocs()
				b.ResetTimer()
				if clients == 1 {
					for range b.N {
						c, _ := tunnelOrDirect(b, p, echo)
						c.Close()
					}
				} else {
					b.SetParallelism((clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							c, _, err := tryTunnel(p, echo)
							if err != nil {
								b.Error(err)
								return
							}
							c.Close()
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tunnels/s")
			})
		}
	}
}

// discard reads r to its end in reads of 1 MiB, as the benchmarks write:
// io.Copy to io.Discard reads 8 KiB at a time, and would bound the
// throughput measured.
func discard(r io.Reader) (int64, error) {
	return io.CopyBuffer(struct{ io.Writer }{io.Discard}, struct{ io.Reader }{r}, make([]byte, 1<<20))
}

// sinkServer sends back the first byte of each connection, reads the rest
// until its end, then writes back how many bytes that was, as 8 bytes.
func sinkServer(b *testing.B) string {
	return serveConns(b, func(c net.Conn) {
		var one [1]byte
		if _, err := io.ReadFull(c, one[:]); err != nil {
			return
		}
		_, _ = c.Write(one[:])
		n, _ := discard(c)
		_ = binary.Write(c, binary.BigEndian, n)
	})
}

// sourceServer sends back the first byte of each connection, then writes
// 1 MiB blocks to it until the client is gone.
func sourceServer(b *testing.B) string {
	block := make([]byte, 1<<20)
	return serveConns(b, func(c net.Conn) {
		var one [1]byte
		if _, err := io.ReadFull(c, one[:]); err != nil {
			return
		}
		_, _ = c.Write(one[:])
		for {
			if _, err := c.Write(block); err != nil {
				return
			}
		}
	})
}

// goSplice relays each connection it accepts to server with io.Copy both
// ways between the two *net.TCPConn, which splices through Go's own pipes
// (internal/poll): how goproxy's tunnels move their bytes, in this process.
// It returns its address.
func goSplice(b *testing.B, server string) string {
	return serveConns(b, func(c net.Conn) {
		d, err := net.Dial("tcp", server)
		if err != nil {
			return
		}
		defer d.Close()
		done := make(chan struct{})
		go func() {
			_, _ = io.Copy(c, d)
			_ = c.(*net.TCPConn).CloseWrite()
			close(done)
		}()
		_, _ = io.Copy(d, c)
		_ = d.(*net.TCPConn).CloseWrite()
		<-done
	})
}

// BenchmarkThroughput sends 1 MiB per operation over one connection, up
// (client to server) or down, through the proxy, directly, or through
// goSplice, a relay that splices as Go's io.Copy does.
func BenchmarkThroughput(b *testing.B) {
	block := make([]byte, 1<<20)
	for _, dir := range []string{"up", "down"} {
		for _, via := range []string{"direct", "gosplice", "proxy"} {
			b.Run("dir="+dir+"/via="+via, func(b *testing.B) {
				var p *proxyUnderTest
				if via == "proxy" {
					p = startProxy(b, config{})
				}
				server := sinkServer(b)
				if dir == "down" {
					server = sourceServer(b)
				}
				if via == "gosplice" {
					server = goSplice(b, server)
				}
				c, br := tunnelOrDirect(b, p, server)
				defer c.Close()
				b.SetBytes(int64(len(block)))
				b.ResetTimer()
				if dir == "up" {
					for range b.N {
						if _, err := c.Write(block); err != nil {
							b.Fatal(err)
						}
					}
					if err := c.(*net.TCPConn).CloseWrite(); err != nil {
						b.Fatal(err)
					}
					var n int64
					if err := binary.Read(br, binary.BigEndian, &n); err != nil || n != int64(b.N)*int64(len(block)) {
						b.Fatal(n, err)
					}
					return
				}
				want := int64(b.N) * int64(len(block))
				if n, err := discard(io.LimitReader(br, want)); n != want {
					b.Fatal(n, err)
				}
			})
		}
	}
}

// inUse returns the Go memory in use, heap and goroutine stacks, after
// collecting garbage.
func inUse() uint64 {
	var m runtime.MemStats
	for range 2 {
		runtime.GC()
	}
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// BenchmarkIdleMemory measures the proxy's Go memory (heap and stacks; not
// the kernel's socket buffers) per idle tunnel and per idle client
// connection, with b.N of them open: what the process holds with them,
// less what it holds with the same clients connected directly (tunnels) or
// waiting in a listener's queue (connections). A tunnel is idle right after
// it opened, or after 64 KiB went each way. Run it with a fixed count,
// -benchtime 2000x.
func BenchmarkIdleMemory(b *testing.B) {
	for _, traffic := range []int{0, 64 << 10} {
		b.Run(fmt.Sprintf("what=tunnel/traffic=%dKiB", traffic>>10), func(b *testing.B) {
			echo := echoServer(b)
			p := startProxyConns(b, config{MaxTunnels: b.N + 1, MaxClientTunnels: b.N + 1}, serverTimeouts{}, b.N+1)
			block := make([]byte, traffic)
			hold := func(p *proxyUnderTest) uint64 {
				conns := make([]net.Conn, b.N)
				for i := range conns {
					var br *bufio.Reader
					conns[i], br = tunnelOrDirect(b, p, echo)
					if traffic == 0 {
						continue
					}
					go func() { _, _ = conns[i].Write(block) }()
					if _, err := io.ReadFull(br, make([]byte, traffic)); err != nil {
						b.Fatal(err)
					}
				}
				m := inUse()
				for _, c := range conns {
					c.Close()
				}
				return m
			}
			direct := hold(nil)
			time.Sleep(10 * time.Millisecond) // let the echo server's goroutines end
			tunnels := hold(p)
			b.ReportMetric((float64(tunnels)-float64(direct))/float64(b.N), "B/tunnel")
			p.waitTunnels()
		})
	}
	b.Run("what=connection", func(b *testing.B) {
		p := startProxyConns(b, config{}, serverTimeouts{}, b.N+1)
		queue, err := net.Listen("tcp", "127.0.0.1:0") // never accepts
		if err != nil {
			b.Fatal(err)
		}
		defer queue.Close()
		hold := func(addr string, wait func()) uint64 {
			conns := make([]net.Conn, b.N)
			for i := range conns {
				if conns[i], err = net.Dial("tcp", addr); err != nil {
					b.Fatal(err)
				}
			}
			wait()
			m := inUse()
			for _, c := range conns {
				c.Close()
			}
			return m
		}
		queued := hold(queue.Addr().String(), func() {})
		idle := hold(p.url.Host, func() {
			for s := p.snapshot().Connections["proxy"]; s.Idle < int64(b.N); s = p.snapshot().Connections["proxy"] {
				time.Sleep(time.Millisecond)
			}
		})
		b.ReportMetric((float64(idle)-float64(queued))/float64(b.N), "B/conn")
	})
}
