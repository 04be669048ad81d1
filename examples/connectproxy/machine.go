package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// machineRefresh is how old the list of this machine's addresses may be
// when an address is checked against it: an address that an interface
// gains is refused at most this long after.
const machineRefresh = time.Second

// machine knows this machine's own addresses: those of its interfaces,
// which it lists again when its list is older than machineRefresh, and
// those the kernel routes to it, which it asks about each time, since a
// local route may hold any prefix (AnyIP). It is safe for concurrent use.
type machine struct {
	list  func() ([]netip.Prefix, error)
	route func(netip.Addr) (bool, error)
	now   func() time.Time
	log   *slog.Logger

	mu       sync.Mutex
	prefixes []netip.Prefix
	listedAt time.Time
}

// newMachine lists the machine's addresses with list, and returns an error
// if it cannot, or if route cannot tell that a loopback address is local:
// without it, every destination would be refused.
func newMachine(list func() ([]netip.Prefix, error), route func(netip.Addr) (bool, error), now func() time.Time, log *slog.Logger) (*machine, error) {
	m := &machine{list: list, route: route, now: now, log: log}
	ps, err := list()
	if err != nil {
		return nil, fmt.Errorf("listing this machine's addresses: %w", err)
	}
	if _, err := route(netip.IPv6Loopback()); err != nil {
		return nil, fmt.Errorf("asking the kernel for routes (or use -allow-machine): %w", err)
	}
	m.prefixes, m.listedAt = ps, now()
	return m, nil
}

// contains reports whether a, in canonical form, is an address of this
// machine: an unspecified address, which reaches it, one of the addresses
// its list returned, or one the kernel routes to it. When listing fails,
// the previous list is kept until the next try, machineRefresh later; when
// the route lookup fails, a is taken for this machine's, and the error is
// returned for the log.
func (m *machine) contains(a netip.Addr) (bool, error) {
	if a.IsUnspecified() || m.listed(a) {
		return true, nil
	}
	local, err := m.route(a)
	if err != nil {
		return true, err
	}
	return local, nil
}

// listed reports whether a is in the list of the interfaces' addresses,
// listing them again if the list is old.
func (m *machine) listed(a netip.Addr) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if now := m.now(); now.Sub(m.listedAt) >= machineRefresh || now.Before(m.listedAt) {
		m.listedAt = now
		if ps, err := m.list(); err != nil {
			m.log.Warn("cannot list this machine's addresses; keeping the previous list", "err", err)
		} else {
			m.prefixes = ps
		}
	}
	for _, p := range m.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// interfacePrefixes returns the addresses of every network interface, in
// canonical form, each as a single-address prefix except on loopback
// interfaces: every address of a loopback interface's prefix is this
// machine's (on Linux 127.0.0.2 reaches it as 127.0.0.1 does).
func interfacePrefixes() ([]netip.Prefix, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var ps []netip.Prefix
	for _, ifi := range ifaces {
		addrs, err := ifi.Addrs()
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(n.IP)
			if !ok {
				continue
			}
			ip = canonical(ip)
			bits := ip.BitLen()
			if ones, size := n.Mask.Size(); ifi.Flags&net.FlagLoopback != 0 && size == bits {
				bits = ones
			}
			ps = append(ps, netip.PrefixFrom(ip, bits).Masked())
		}
	}
	return ps, nil
}
