package main

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"time"
)

// Dialing follows Happy Eyeballs (RFC 8305): the addresses are tried in
// turn, the families interleaved, and an attempt that has not connected
// after attemptDelay gets a second one beside it, so that an address that
// drops SYNs costs a quarter of a second, not the dial timeout.
const (
	// attemptDelay is RFC 8305's Connection Attempt Delay, its
	// recommended value.
	attemptDelay = 250 * time.Millisecond
	// maxAttempts are in flight at once for a tunnel, within the
	// descriptors the budget counts for it (fdsPerTunnel).
	maxAttempts = 2
	// minAttempt is the least time an attempt gets, when the dial timeout
	// shared among the addresses left would give it less, as net.Dialer
	// does.
	minAttempt = 2 * time.Second
)

// resolve returns host's addresses, in canonical form and each once.
func (p *proxy) resolve(ctx context.Context, host string) ([]netip.Addr, refusal, error) {
	if addr, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{canonical(addr)}, refusalNone, nil
	}
	addrs, err := p.cfg.Resolver.LookupNetIP(ctx, "ip", host)
	switch {
	case err == nil && len(addrs) == 0:
		return nil, refusalUnresolved, errors.New("no addresses")
	case err == nil:
		var out []netip.Addr
		for _, a := range addrs {
			if a = canonical(a); !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
		return out, refusalNone, nil
	case p.dialing.Err() != nil:
		return nil, refusalShutdown, err
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return nil, refusalTimeout, err
	}
	return nil, refusalUnresolved, err
}

// interleave orders addrs as RFC 8305 section 4 does: the resolver's first
// address, then the families in turn, each in the resolver's order.
func interleave(addrs []netip.Addr) []netip.Addr {
	if len(addrs) < 2 {
		return addrs
	}
	var first, other []netip.Addr
	for _, a := range addrs {
		if a.Is4() == addrs[0].Is4() {
			first = append(first, a)
		} else {
			other = append(other, a)
		}
	}
	out := make([]netip.Addr, 0, len(addrs))
	for i := 0; i < len(first) || i < len(other); i++ {
		if i < len(first) {
			out = append(out, first[i])
		}
		if i < len(other) {
			out = append(out, other[i])
		}
	}
	return out
}

// attempt is the outcome of one connection attempt.
type attempt struct {
	conn net.Conn
	addr netip.AddrPort
	err  error
}

// dialAny connects to one of addrs, all checked, on port, and returns the
// connection and the address it connected to. The addresses are tried as
// Happy Eyeballs does (see attemptDelay), up to maxAttempts at once, each
// within a share of what is left of ctx's deadline: that time divided by
// the addresses not yet tried, but at least minAttempt.
func (p *proxy) dialAny(ctx context.Context, addrs []netip.Addr, port uint16) (net.Conn, netip.AddrPort, error) {
	if len(addrs) == 1 {
		// Nothing to race: the one address has all the time.
		ap := netip.AddrPortFrom(addrs[0], port)
		c, err := p.cfg.Dial(ctx, ap)
		return c, ap, err
	}
	addrs = interleave(addrs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan attempt, len(addrs))
	next, inFlight := 0, 0
	start := func() {
		ap := netip.AddrPortFrom(addrs[next], port)
		share := time.Duration(1<<63 - 1)
		if deadline, ok := ctx.Deadline(); ok {
			share = max(time.Until(deadline)/time.Duration(len(addrs)-next), minAttempt)
		}
		next++
		inFlight++
		go func() {
			actx, cancel := context.WithTimeout(ctx, share)
			defer cancel()
			c, err := p.cfg.Dial(actx, ap)
			results <- attempt{c, ap, err}
		}()
	}
	start()
	delay := time.NewTimer(attemptDelay)
	defer delay.Stop()
	var errs []error
	for inFlight > 0 {
		select {
		case r := <-results:
			inFlight--
			if r.err == nil {
				// The attempts still in flight are cancelled;
				// one may connect all the same.
				go func(n int) {
					for range n {
						if r := <-results; r.conn != nil {
							r.conn.Close()
						}
					}
				}(inFlight)
				return r.conn, r.addr, nil
			}
			errs = append(errs, r.err)
			if next < len(addrs) && ctx.Err() == nil {
				start()
				delay.Reset(attemptDelay)
			}
		case <-delay.C:
			if next < len(addrs) && inFlight < maxAttempts {
				start()
				delay.Reset(attemptDelay)
			}
		}
	}
	return nil, netip.AddrPort{}, errors.Join(errs...)
}

// dialTCP connects to addr over TCP, without keep-alives (see
// noKeepAlive), through net.Dialer's DialContext, which reads the
// address's text back without a lookup. Not Dialer.DialTCP, which takes a
// netip.AddrPort: given no local address it binds the socket to the
// wildcard address and port 0 before connecting, and a port taken by bind
// is taken for every destination, where connect shares one among
// different destinations. Under loadtest's 32 clients that ran out of
// ephemeral ports, and tunnels got 502 (TestDialSharesPorts).
func dialTCP(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
	return tcpDialer.DialContext(ctx, "tcp", addr.String())
}

var tcpDialer = net.Dialer{KeepAlive: noKeepAlive}

// dialRefusal returns why dialAny's err refuses a tunnel: the proxy closing,
// an address that did not answer in time (504), or every address refusing
// or unreachable (502).
func (p *proxy) dialRefusal(err error) refusal {
	switch {
	case p.dialing.Err() != nil:
		return refusalShutdown
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return refusalTimeout
	}
	return refusalUnreachable
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
