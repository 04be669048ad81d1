package main

import (
	"net/netip"
	"sync"
)

// limits counts the tunnels open and being opened, in all and by client
// address, against config.MaxTunnels and MaxClientTunnels. The cap on client
// connections, tunnels' included, is connLimiter's.
type limits struct {
	max, maxClient int

	mu      sync.Mutex
	opening int                // all tunnels open or opening
	perAddr map[netip.Addr]int // the same, by client
	closed  bool
}

// reserve counts a tunnel being opened by client, unless that is one too
// many or the proxy is closed. The zero Addr, a client that is not on IP,
// counts in the total only.
func (l *limits) reserve(client netip.Addr) refusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return refusalShutdown
	case l.opening >= l.max:
		return refusalTooMany
	case client.IsValid() && l.perAddr[client] >= l.maxClient:
		return refusalClientLimit
	}
	l.opening++
	if client.IsValid() {
		l.perAddr[client]++
	}
	return refusalNone
}

// release counts out a tunnel that reserve counted, once it is refused or
// over.
func (l *limits) release(client netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.opening--
	if client.IsValid() {
		if l.perAddr[client]--; l.perAddr[client] == 0 {
			delete(l.perAddr, client)
		}
	}
}

// close makes every later reserve refuse.
func (l *limits) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}
