// Connectproxy is a small HTTP CONNECT proxy that remembers, for a sliding
// window, which destinations and which client addresses it has tunnelled,
// in two rotating Bloom filters of constant size (bloom.Rotating), and
// counts those it sees for the first time in the window.
//
// Usage:
//
//	go run ./examples/connectproxy [-listen 127.0.0.1:8080] [-window 1m] [-expected 100000] [-fpp 0.01]
//
// Then, in another terminal:
//
//	curl -x http://127.0.0.1:8080 https://example.com/
//	curl http://127.0.0.1:8080/stats
//
// It listens on loopback by default: a proxy on a public address tunnels
// anyone anywhere. It only tunnels; other requests in proxy form get 405.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
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
	window := fs.Duration("window", time.Minute, "how long destinations and clients are remembered: one to two windows")
	expected := fs.Int64("expected", 100_000, "new destinations (and new clients) per window the filters are sized for")
	fpp := fs.Float64("fpp", 0.01, "false-positive probability of each filter generation; the filters' is up to twice that")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	logger := log.New(logw, "connectproxy: ", log.LstdFlags)
	p, err := NewProxy(Config{Window: *window, ExpectedInsertions: *expected, FPP: *fpp, Log: logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ErrorLog: logger}
	logger.Printf("listening on %s; try: curl -x http://%[1]s https://example.com/ and curl http://%[1]s/stats", ln.Addr())

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = srv.Shutdown(shutdown)
		cancel()
	}
	p.Close()
	return err
}
