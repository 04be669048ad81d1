// Connectproxy is a small HTTP CONNECT proxy that remembers, for a sliding
// window, which destinations and which client addresses it has tunnelled,
// in two rotating Bloom filters of constant size (bloom.Rotating), and
// counts those it sees for the first time in the window.
//
// Usage:
//
//	go run ./examples/connectproxy [-listen 127.0.0.1:8080] [-admin addr]
//		[-allow-ports 443] [-allow-hosts cidr,name,...]
//		[-max-tunnels 1024] [-max-client-tunnels 64] [-idle-timeout 5m]
//		[-window 1m] [-expected 100000] [-fpp 0.01]
//
// Then, in another terminal:
//
//	curl -x http://127.0.0.1:8080 https://example.com/
//	curl http://127.0.0.1:8080/stats
//	curl http://127.0.0.1:8080/metrics
//
// By default it tunnels only to port 443 of public addresses: never to
// loopback, private, link-local, multicast or reserved addresses, nor to
// itself, unless -allow-hosts lists them. It listens on loopback by
// default; on a public address, anyone who reaches it can use it to reach
// whatever its policy allows. It only tunnels; other requests in proxy form
// get 405.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "connectproxy:", err)
		os.Exit(1)
	}
}

// run parses args, serves until ctx is done, and logs to logw.
func run(ctx context.Context, args []string, logw io.Writer) error {
	fs := flag.NewFlagSet("connectproxy", flag.ContinueOnError)
	fs.SetOutput(logw)
	listen := fs.String("listen", "127.0.0.1:8080", "`address` to listen on")
	admin := fs.String("admin", "", "`address` to serve /stats and /metrics on; empty means on -listen, to loopback clients only")
	allowPorts := fs.String("allow-ports", "443", "comma-separated destination `ports` and ranges lo-hi tunnelled to")
	allowHosts := fs.String("allow-hosts", "", "comma-separated CIDR prefixes and host `names` tunnelled to although loopback, private, link-local, multicast or reserved")
	maxTunnels := fs.Int("max-tunnels", 1024, "tunnels open at once, past which requests get 503")
	maxClient := fs.Int("max-client-tunnels", 64, "tunnels open at once from one client address, past which it gets 429")
	idle := fs.Duration("idle-timeout", 5*time.Minute, "how long a tunnel may carry no byte before it is closed")
	window := fs.Duration("window", time.Minute, "how long destinations and clients are remembered: one to two windows")
	expected := fs.Int64("expected", 100_000, "new destinations (and new clients) per window the filters are sized for")
	fpp := fs.Float64("fpp", 0.01, "false-positive probability of each filter generation; the filters' is up to twice that")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	policy, err := parsePolicy(*allowPorts, *allowHosts)
	if err != nil {
		return err
	}
	if *maxTunnels <= 0 || *maxClient <= 0 || *idle <= 0 {
		return errors.New("-max-tunnels, -max-client-tunnels and -idle-timeout must be > 0")
	}

	logger := slog.New(slog.NewTextHandler(logw, nil))
	cfg := Config{
		Window: *window, ExpectedInsertions: *expected, FPP: *fpp,
		Policy: policy, MaxTunnels: *maxTunnels, MaxClientTunnels: *maxClient, IdleTimeout: *idle,
		SeparateAdmin: *admin != "", Log: logger,
	}
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for _, addr := range []string{*listen, *admin} {
		if addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		lns = append(lns, ln)
		if ap, err := netip.ParseAddrPort(ln.Addr().String()); err == nil {
			cfg.Self = append(cfg.Self, ap)
		}
	}
	p, err := NewProxy(cfg)
	if err != nil {
		return err
	}
	servers := []*http.Server{newServer(p, logger, Timeouts{})}
	attrs := []any{"addr", lns[0].Addr().String()}
	if *admin != "" {
		servers = append(servers, newServer(p.Admin(), logger, Timeouts{}))
		attrs = append(attrs, "admin", lns[1].Addr().String())
	}
	logger.Info("listening", append(attrs, "allow-ports", *allowPorts, "allow-hosts", *allowHosts)...)

	served := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { served <- srv.Serve(lns[i]) }()
	}
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	// Closing p first stops the dials that handlers wait for, so that
	// Shutdown does not wait for them.
	p.Close()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	for _, srv := range servers {
		if serr := srv.Shutdown(shutdown); err == nil {
			err = serr
		}
	}
	cancel()
	return err
}

// Timeouts are an http.Server's; zero fields mean the defaults of
// newServer.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers (10s), and Idle how
	// long a keep-alive connection waits for the next request (60s).
	ReadHeader, Idle time.Duration
}

// newServer returns an http.Server for h with timeouts for requests and
// keep-alive connections, and a bound on request headers. A tunnel's
// connection leaves the server, and its timeouts, when it is hijacked.
func newServer(h http.Handler, log *slog.Logger, t Timeouts) *http.Server {
	if t.ReadHeader <= 0 {
		t.ReadHeader = 10 * time.Second
	}
	if t.Idle <= 0 {
		t.Idle = time.Minute
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.ReadHeader,
		WriteTimeout:      t.ReadHeader,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
