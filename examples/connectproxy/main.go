// Connectproxy is a small HTTP CONNECT proxy that remembers, for a sliding
// window, which destinations and which client addresses it has tunnelled,
// in two rotating Bloom filters of constant size (bloom.Rotating), and
// counts those it sees for the first time in the window.
//
// Usage:
//
//	go run ./examples/connectproxy [-listen 127.0.0.1:8080] [-admin addr]
//		[-allow-ports 443] [-allow-hosts cidr,name,...] [-allow-machine]
//		[-max-conns n] [-max-tunnels 1024] [-max-client-tunnels 64]
//		[-idle-timeout 5m] [-window 1m] [-expected 100000] [-fpp 0.01]
//
// Then, in another terminal:
//
//	curl -x http://127.0.0.1:8080 https://example.com/
//	curl http://127.0.0.1:8080/stats
//	curl http://127.0.0.1:8080/metrics
//
// By default it tunnels only to port 443 of public addresses: never to an
// address of the IANA special-purpose registries (loopback, private,
// link-local, documentation, reserved and the rest), nor to multicast,
// unless -allow-hosts lists them; never to this machine's own addresses
// unless -allow-machine; and never to itself. It listens on loopback by
// default; on a public address, anyone who reaches it can use it to reach
// whatever its policy allows. It only tunnels; other requests in proxy form
// get 405.
//
// A mistake in the command line makes it exit with status 2, naming the
// flag; any other error with status 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
)

func main() {
	ctx, stop := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		// A second signal ends the program at once, as if it had not
		// asked for signals.
		signal.Stop(sigs)
		stop(fmt.Errorf("signal %v", s))
	}()
	err := run(ctx, os.Args[1:], os.Stderr)
	stop(nil)
	var usage usageError
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
	case errors.As(err, &usage):
		if !usage.printed {
			fmt.Fprintln(os.Stderr, "connectproxy:", err)
		}
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "connectproxy:", err)
		os.Exit(1)
	}
}

// A usageError is a mistake in the command line, for which the program
// exits with status 2, as the flag package's programs do.
type usageError struct {
	err     error
	printed bool // by the flag package, with the usage
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// flagError returns a usageError for the value of the flag name.
func flagError(name string, err error) error {
	return usageError{err: fmt.Errorf("-%s: %w", name, err)}
}

// run parses args, serves until ctx is done, and logs to logw.
func run(ctx context.Context, args []string, logw io.Writer) error {
	fs := flag.NewFlagSet("connectproxy", flag.ContinueOnError)
	fs.SetOutput(logw)
	listen := fs.String("listen", "127.0.0.1:8080", "`address` to listen on")
	admin := fs.String("admin", "", "`address` to serve /stats and /metrics on; empty means on -listen, to loopback clients only")
	allowPorts := fs.String("allow-ports", "443", "comma-separated destination `ports` and ranges lo-hi tunnelled to")
	allowHosts := fs.String("allow-hosts", "", "comma-separated CIDR prefixes and host `names` tunnelled to although in a special-purpose range: loopback, private, link-local, documentation, reserved, multicast and the rest")
	allowMachine := fs.Bool("allow-machine", false, "judge this machine's own addresses by -allow-hosts like any other, instead of refusing them all")
	maxConns := fs.Int("max-conns", 0, "client `connections` open at once, tunnels' included, past which idle ones are closed and, when none is idle, new ones refused; 0 means what the descriptor limit leaves")
	maxTunnels := fs.Int("max-tunnels", defaultTunnels, "tunnels open at once, past which requests get 503; fewer by default if the descriptor limit is low")
	maxClient := fs.Int("max-client-tunnels", 64, "tunnels open at once from one client address, past which it gets 429")
	idle := fs.Duration("idle-timeout", 5*time.Minute, "how long a tunnel may carry no byte before it is closed")
	window := fs.Duration("window", time.Minute, "how long destinations and clients are remembered: one to two windows")
	expected := fs.Int64("expected", 100_000, "new destinations (and new clients) per window the filters are sized for")
	fpp := fs.Float64("fpp", 0.01, "false-positive probability of each filter generation; the filters' is up to twice that")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err: err, printed: true}
	}
	if fs.NArg() > 0 {
		return usageError{err: fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	policy, err := parsePolicy(*allowPorts, *allowHosts)
	if err != nil {
		return usageError{err: err}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, f := range []struct {
		name, rule string
		ok         bool
	}{
		{"max-conns", ">= 0", *maxConns >= 0},
		{"max-tunnels", "> 0", *maxTunnels > 0},
		{"max-client-tunnels", "> 0", *maxClient > 0},
		{"idle-timeout", "> 0", *idle > 0},
	} {
		if !f.ok {
			return flagError(f.name, fmt.Errorf("%s must be %s", fs.Lookup(f.name).Value, f.rule))
		}
	}
	if *window <= 0 {
		return flagError("window", fmt.Errorf("window (%v) must be > 0", *window))
	}
	if _, _, err := bloom.Size(*expected, 0.5); err != nil {
		return flagError("expected", err)
	}
	if _, _, err := bloom.Size(1, *fpp); err != nil {
		return flagError("fpp", err)
	}
	for _, f := range []struct{ name, addr string }{{"listen", *listen}, {"admin", *admin}} {
		if f.addr == "" {
			continue
		}
		_, port, err := net.SplitHostPort(f.addr)
		if err == nil {
			// A port may be a service name ("https"), which net.Listen
			// looks up: an unknown one is a mistake in the command
			// line, as an out-of-range number is.
			_, err = net.LookupPort("tcp", port)
		}
		if err != nil {
			return flagError(f.name, err)
		}
	}
	nofile, limited := openFileLimit()
	if !limited {
		nofile = math.MaxInt32
	}
	tunnels := *maxTunnels
	if !set["max-tunnels"] {
		tunnels = 0
	}
	tunnels, conns, err := budget(nofile, *admin != "", tunnels, *maxConns)
	switch {
	case err != nil && (set["max-conns"] || set["max-tunnels"]):
		return usageError{err: fmt.Errorf("-max-conns, -max-tunnels: %w", err)}
	case err != nil:
		return err
	}

	logger := slog.New(slog.NewTextHandler(logw, nil))
	cfg := config{
		Window: *window, ExpectedInsertions: *expected, FPP: *fpp,
		Policy: policy, AllowMachine: *allowMachine,
		MaxTunnels: tunnels, MaxClientTunnels: *maxClient, IdleTimeout: *idle,
		SeparateAdmin: *admin != "", Log: logger,
	}
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for _, f := range []struct{ name, addr string }{{"listen", *listen}, {"admin", *admin}} {
		if f.addr == "" {
			continue
		}
		ln, err := (&net.ListenConfig{KeepAlive: noKeepAlive}).Listen(ctx, "tcp", f.addr)
		var addrErr *net.AddrError
		switch {
		case errors.As(err, &addrErr):
			return flagError(f.name, err)
		case err != nil:
			return fmt.Errorf("-%s: %w", f.name, err)
		}
		lns = append(lns, ln)
		if ap, err := netip.ParseAddrPort(ln.Addr().String()); err == nil {
			cfg.Self = append(cfg.Self, ap)
		}
	}
	p, err := newProxy(cfg)
	if err != nil {
		return err
	}
	servers := []*http.Server{newServer(p, logger, serverTimeouts{})}
	attrs := []any{"addr", lns[0].Addr().String()}
	lns[0] = p.limit("proxy", lns[0], servers[0], conns)
	if *admin != "" {
		servers = append(servers, newServer(p.admin, logger, serverTimeouts{}))
		attrs = append(attrs, "admin", lns[1].Addr().String())
		lns[1] = p.limit("admin", lns[1], servers[1], adminConns)
	}
	attrs = append(attrs, "allow-ports", *allowPorts, "allow-hosts", *allowHosts, "allow-machine", *allowMachine,
		"max-conns", conns, "max-tunnels", tunnels, "open-file-limit", nofile)
	logger.Info("listening", attrs...)

	served := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { served <- srv.Serve(lns[i]) }()
	}
	select {
	case err = <-served:
		logger.Error("shutting down", "err", err)
	case <-ctx.Done():
		st := p.snapshot()
		logger.Info("shutting down", "cause", context.Cause(ctx), "tunnels", st.Tunnels.Active, "connections", st.Connections["proxy"].Active)
	}
	// Closing p first stops the dials that handlers wait for and ends the
	// tunnels, so that Shutdown, which stops the listeners and waits for
	// the requests in progress, does not wait for them.
	p.Close()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	for _, srv := range servers {
		if serr := srv.Shutdown(shutdown); err == nil {
			err = serr
		}
	}
	cancel()
	st := p.snapshot()
	logger.Info("stopped", "tunnels_total", st.Tunnels.Total, "bytes_up", st.Tunnels.BytesUp, "bytes_down", st.Tunnels.BytesDown)
	return err
}

// serverTimeouts are an http.Server's; zero fields mean the defaults of
// newServer.
type serverTimeouts struct {
	// ReadHeader bounds reading a request's headers (10s), and Idle how
	// long a keep-alive connection waits for the next request (60s).
	ReadHeader, Idle time.Duration
}

// newServer returns an http.Server for h with timeouts for requests and
// keep-alive connections, and a bound on request headers. A tunnel's
// connection leaves the server, and its timeouts, when it is hijacked.
func newServer(h http.Handler, log *slog.Logger, t serverTimeouts) *http.Server {
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
