package main

import (
	"log/slog"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// seen is the point of the example: two rotating Bloom filters of constant
// size remember, for a sliding window, the destinations tunnelled to and
// the clients that asked, so that the proxy can tell a first sighting from
// a repeat in constant memory, however many there are.
//
// A destination is the address and port dialled, so that localhost:443 and
// 127.0.0.1:443 are one destination. It is first seen when the filter does
// not remember it; like two Puts of one new value, two tunnels opened to a
// new destination at the same moment may both count as first seen. Put
// returns whether the value was new, with one hash and no allocation, which
// is all the proxy needs.
type seen struct {
	dests   *bloom.Rotating[netip.AddrPort] // the addresses dialled
	clients *bloom.Rotating[netip.Addr]     // client IP addresses, IPv4 unmapped

	newDests, repeatDests     atomic.Int64
	newClients, repeatClients atomic.Int64
}

// newSeen returns filters sized for n new values per window at false-positive
// rate fpp per generation, on clock, or the system's if nil.
func newSeen(n int64, fpp float64, window time.Duration, clock bloom.Clock) (*seen, error) {
	var opts []bloom.Option
	if clock != nil {
		opts = append(opts, bloom.WithClock(clock))
	}
	dests, err := bloom.NewRotating(funnel.AddrPort, n, fpp, window, opts...)
	if err != nil {
		return nil, err
	}
	clients, err := bloom.NewRotating(funnel.Addr, n, fpp, window, opts...)
	if err != nil {
		return nil, err
	}
	return &seen{dests: dests, clients: clients}, nil
}

// record counts the destination dialled, for target, and the client's
// address, unless it is not an IP address (a Unix socket's), each as new if
// the filters do not remember it, and logs those that are.
func (s *seen) record(dialled netip.AddrPort, target string, client netip.AddrPort, log *slog.Logger) {
	if s.dests.Put(dialled) {
		s.newDests.Add(1)
		log.Info("first seen in the window", "destination", dialled, "target", target)
	} else {
		s.repeatDests.Add(1)
	}
	if !client.IsValid() {
		return
	}
	if a := client.Addr().Unmap(); s.clients.Put(a) {
		s.newClients.Add(1)
		log.Info("first seen in the window", "client", a)
	} else {
		s.repeatClients.Add(1)
	}
}
