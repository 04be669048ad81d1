package main

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// A Policy says which destinations the proxy tunnels to. The zero Policy
// allows nothing; a Policy from parsePolicy allows its ports on public
// addresses, and its hosts besides.
type Policy struct {
	// Ports are the destination ports allowed, as inclusive ranges.
	Ports []PortRange
	// Prefixes are address ranges allowed even though they are loopback,
	// private, link-local, unspecified, multicast or reserved.
	Prefixes []netip.Prefix
	// Hosts are host names, lower-case without a final dot, allowed
	// whatever they resolve to.
	Hosts []string
}

// A PortRange is the ports from Lo to Hi, both included.
type PortRange struct{ Lo, Hi uint16 }

// parsePolicy reads the -allow-ports and -allow-hosts flags: ports is a
// comma-separated list of ports and ranges such as "443,8000-8999", hosts
// a comma-separated list of CIDR prefixes, IP addresses and host names.
func parsePolicy(ports, hosts string) (Policy, error) {
	var p Policy
	for f := range strings.SplitSeq(ports, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(f, "-")
		a, errA := strconv.ParseUint(lo, 10, 16)
		b, errB := a, error(nil)
		if isRange {
			b, errB = strconv.ParseUint(hi, 10, 16)
		}
		if errA != nil || errB != nil || a == 0 || b < a {
			return Policy{}, fmt.Errorf("-allow-ports: %q is not a port from 1 to 65535 or a range lo-hi of them", f)
		}
		p.Ports = append(p.Ports, PortRange{uint16(a), uint16(b)})
	}
	for f := range strings.SplitSeq(hosts, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if pfx, err := netip.ParsePrefix(f); err == nil {
			p.Prefixes = append(p.Prefixes, unmapPrefix(pfx.Masked()))
		} else if addr, err := netip.ParseAddr(f); err == nil {
			addr = addr.Unmap()
			p.Prefixes = append(p.Prefixes, netip.PrefixFrom(addr, addr.BitLen()))
		} else if validHostname(f) {
			p.Hosts = append(p.Hosts, canonicalHost(f))
		} else {
			return Policy{}, fmt.Errorf("-allow-hosts: %q is neither a CIDR prefix, an IP address nor a host name", f)
		}
	}
	return p, nil
}

// unmapPrefix turns ::ffff:a.b.c.d/n, n >= 96, into a.b.c.d/(n-96), since
// addresses are checked unmapped.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

func canonicalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// allowsPort reports whether port is in one of p's ranges.
func (p Policy) allowsPort(port uint16) bool {
	for _, r := range p.Ports {
		if r.Lo <= port && port <= r.Hi {
			return true
		}
	}
	return false
}

// allowsHost reports whether host, a name from a request, is listed.
func (p Policy) allowsHost(host string) bool {
	host = canonicalHost(host)
	for _, h := range p.Hosts {
		if h == host {
			return true
		}
	}
	return false
}

// reserved are ranges that are not public unicast addresses and that
// netip.Addr has no predicate for.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // shared address space (CGNAT)
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and broadcast
	netip.MustParsePrefix("::/96"),          // IPv4-compatible, deprecated
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64, which reaches IPv4 behind it
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("100::/64"),       // discard
	netip.MustParsePrefix("2002::/16"),      // 6to4, which embeds IPv4
	netip.MustParsePrefix("fec0::/10"),      // site-local, deprecated
	netip.MustParsePrefix("2001::/32"),      // Teredo, which embeds IPv4
	netip.MustParsePrefix("2001:10::/28"),   // ORCHID
	netip.MustParsePrefix("255.255.255.255/32"),
}

// addrRefusal returns why p refuses addr, or refusalNone. It sees through
// IPv4-mapped IPv6 addresses.
func (p Policy) addrRefusal(addr netip.Addr) refusal {
	addr = addr.Unmap()
	for _, pfx := range p.Prefixes {
		if pfx.Contains(addr) {
			return refusalNone
		}
	}
	switch {
	case addr.IsUnspecified():
		return refusalUnspecified
	case addr.IsLoopback():
		return refusalLoopback
	case addr.IsPrivate():
		return refusalPrivate
	case addr.IsLinkLocalUnicast():
		return refusalLinkLocal
	case addr.IsMulticast():
		return refusalMulticast
	}
	for _, pfx := range reserved {
		if pfx.Contains(addr) {
			return refusalReserved
		}
	}
	return refusalNone
}
