// Loadtest measures an HTTP CONNECT proxy on loopback, for the side-by-side
// figures in the connectproxy README: tunnels per second with 1 and with 32
// clients (CONNECT, 200, a byte each way, close), the proxy's resident
// memory per idle tunnel after 64 KiB went each way, and the proxy's CPU
// time per GiB and the MB/s through one tunnel, client to server. It runs
// the servers behind the proxy itself, on loopback ports of its own.
//
// Usage:
//
//	go run ./examples/connectproxy/loadtest -proxy 127.0.0.1:8080 -pid PID
//
// where PID is the proxy's process, whose /proc/PID/status (VmRSS) and
// /proc/PID/stat (utime and stime) it reads: Linux only.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	proxy := flag.String("proxy", "127.0.0.1:8080", "the proxy's `address`")
	pid := flag.Int("pid", 0, "the proxy's process `id`, for its memory and CPU time")
	dur := flag.Duration("dur", 3*time.Second, "how long each tunnel rate is measured")
	idleN := flag.Int("idle", 1000, "idle tunnels held for the memory figure")
	bulkMiB := flag.Int("bulk", 2048, "MiB sent through one tunnel")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("loadtest: ")
	if *pid <= 0 {
		log.Fatal("-pid is needed")
	}

	echo := serve(func(c net.Conn) { _, _ = io.Copy(c, c) })
	sink := serve(func(c net.Conn) {
		// Reads of 1 MiB, as the client writes: io.Copy to io.Discard
		// reads 8 KiB at a time, and would bound the bulk figure.
		buf := make([]byte, 1<<20)
		var n int64
		for {
			m, err := c.Read(buf)
			n += int64(m)
			if err != nil {
				break
			}
		}
		fmt.Fprintf(c, "%d\n", n)
	})

	r1, e1 := rate(*proxy, echo, 1, *dur)
	r32, e32 := rate(*proxy, echo, 32, *dur)
	kb, held, err := idle(*proxy, echo, *pid, *idleN)
	if err != nil {
		log.Print("idle tunnels: ", err)
	}
	cpuPerGiB, mbs, err := bulk(*proxy, sink, *pid, *bulkMiB)
	if err != nil {
		log.Print("bulk: ", err)
	}
	fmt.Printf("rate1=%.0f rate32=%.0f kb_per_idle=%.1f cpu_s_per_gib=%.3f bulk_mb_s=%.0f idle_n=%d errs=%d,%d\n",
		r1, r32, kb, cpuPerGiB, mbs, held, e1, e32)
}

// serve accepts connections on a loopback port and calls handle with each,
// in a goroutine of its own; it returns the address.
func serve(handle func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// connect opens a tunnel to target through proxy and reads the proxy's
// answer, which must be 200.
func connect(proxy, target string) (net.Conn, *bufio.Reader, error) {
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		return nil, nil, err
	}
	if _, err := io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n"); err != nil {
		c.Close()
		return nil, nil, err
	}
	br := bufio.NewReaderSize(c, 1024)
	status, err := br.ReadString('\n')
	if err == nil && !strings.Contains(status, " 200") {
		err = fmt.Errorf("answer %q", status)
	}
	for err == nil {
		var line string
		if line, err = br.ReadString('\n'); line == "\r\n" {
			return c, br, nil
		}
	}
	c.Close()
	return nil, nil, err
}

// rate opens tunnels from clients at once for d, each carrying a byte each
// way, and returns the tunnels per second and the failures.
func rate(proxy, echo string, clients int, d time.Duration) (float64, int64) {
	var n, failed atomic.Int64
	start := time.Now()
	stop := start.Add(d)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b [1]byte
			for time.Now().Before(stop) {
				c, br, err := connect(proxy, echo)
				if err != nil {
					failed.Add(1)
					time.Sleep(time.Millisecond)
					continue
				}
				if _, err := c.Write([]byte("x")); err != nil {
					failed.Add(1)
				} else if _, err := io.ReadFull(br, b[:]); err != nil {
					failed.Add(1)
				} else {
					n.Add(1)
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds(), failed.Load()
}

// idle opens n tunnels, sends 64 KiB each way through each, and returns the
// proxy's resident memory per tunnel then, less what it was before, with
// the tunnels held.
func idle(proxy, echo string, pid, n int) (float64, int, error) {
	time.Sleep(500 * time.Millisecond) // the rate tests' tunnels end
	base, err := rss(pid)
	if err != nil {
		return 0, 0, err
	}
	block, back := make([]byte, 64<<10), make([]byte, 64<<10)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		time.Sleep(500 * time.Millisecond)
	}()
	for range n {
		c, br, err := connect(proxy, echo)
		if err != nil {
			return 0, len(conns), err
		}
		conns = append(conns, c)
		go func() { _, _ = c.Write(block) }()
		if _, err := io.ReadFull(br, back); err != nil {
			return 0, len(conns), err
		}
	}
	time.Sleep(time.Second)
	held, err := rss(pid)
	return float64(held-base) / float64(len(conns)), len(conns), err
}

// bulk sends mib MiB through one tunnel to sink and returns the proxy's CPU
// seconds per GiB and the MB/s.
func bulk(proxy, sink string, pid, mib int) (float64, float64, error) {
	c, br, err := connect(proxy, sink)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	block := make([]byte, 1<<20)
	cpu0, err := cpuTime(pid)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	for range mib {
		if _, err := c.Write(block); err != nil {
			return 0, 0, err
		}
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return 0, 0, err
	}
	// The sink's count, or the end: some proxies close both ways at the
	// client's end.
	got, rerr := br.ReadString('\n')
	elapsed := time.Since(start)
	cpu1, err := cpuTime(pid)
	if err != nil {
		return 0, 0, err
	}
	if strings.TrimSpace(got) != strconv.Itoa(mib<<20) {
		log.Printf("bulk: the server counted %q (%v), not %d bytes", got, rerr, mib<<20)
	}
	return (cpu1 - cpu0) / (float64(mib) / 1024), float64(mib<<20) / 1e6 / elapsed.Seconds(), nil
}

// rss returns the resident memory of process pid, in KiB.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, errors.New("no VmRSS in /proc/PID/status")
}

// cpuTime returns the user and system CPU time of process pid, in seconds,
// in clock ticks of 1/100 s.
func cpuTime(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0, errors.New("malformed /proc/PID/stat")
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 13 {
		return 0, errors.New("short /proc/PID/stat")
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return (utime + stime) / 100, nil
}
