package main

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// A policy says which destinations the proxy tunnels to. The zero policy
// allows nothing; a policy from parsePolicy allows its ports on public
// addresses, and its hosts besides.
type policy struct {
	// Ports are the destination ports allowed, as inclusive ranges.
	Ports []portRange
	// Prefixes are address ranges allowed even though they are in one of
	// the special ranges (specials), in canonical form.
	Prefixes []netip.Prefix
	// Hosts are host names, lower-case without a final dot, allowed
	// whatever they resolve to.
	Hosts []string
}

// A portRange is the ports from Lo to Hi, both included.
type portRange struct{ Lo, Hi uint16 }

// parsePolicy reads the -allow-ports and -allow-hosts flags: ports is a
// comma-separated list of ports and ranges such as "443,8000-8999", hosts
// a comma-separated list of CIDR prefixes, IP addresses and host names.
func parsePolicy(ports, hosts string) (policy, error) {
	var p policy
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
			return policy{}, fmt.Errorf("-allow-ports: %q is not a port from 1 to 65535 or a range lo-hi of them", f)
		}
		p.Ports = append(p.Ports, portRange{uint16(a), uint16(b)})
	}
	for f := range strings.SplitSeq(hosts, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if pfx, err := netip.ParsePrefix(f); err == nil {
			p.Prefixes = append(p.Prefixes, canonicalPrefix(pfx))
		} else if addr, err := netip.ParseAddr(f); err == nil {
			addr = canonical(addr)
			p.Prefixes = append(p.Prefixes, netip.PrefixFrom(addr, addr.BitLen()))
		} else if validHostname(f) {
			p.Hosts = append(p.Hosts, canonicalHost(f))
		} else {
			return policy{}, fmt.Errorf("-allow-hosts: %q is neither a CIDR prefix, an IP address nor a host name", f)
		}
	}
	return p, nil
}

// canonicalPrefix turns ::ffff:a.b.c.d/n and ::a.b.c.d/n, n >= 96, into
// a.b.c.d/(n-96), since addresses are judged in canonical form. A prefix of
// ::/96 that holds :: stays IPv6, and so matches only :: and ::1.
func canonicalPrefix(p netip.Prefix) netip.Prefix {
	p = p.Masked()
	if a := p.Addr(); p.Bits() >= 96 {
		if c := canonical(a); c.Is4() {
			return netip.PrefixFrom(c, p.Bits()-96)
		}
	}
	return p
}

func canonicalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// allowsPort reports whether port is in one of p's ranges.
func (p policy) allowsPort(port uint16) bool {
	for _, r := range p.Ports {
		if r.Lo <= port && port <= r.Hi {
			return true
		}
	}
	return false
}

// allowsHost reports whether host, a name from a request, is listed.
func (p policy) allowsHost(host string) bool {
	host = canonicalHost(host)
	for _, h := range p.Hosts {
		if h == host {
			return true
		}
	}
	return false
}

// addrRefusal returns why p refuses addr, or refusalNone. It judges addr
// in canonical form, by the ranges of specials unless p lists it. It does
// not know this machine's addresses, nor the proxy's: see proxy.check.
func (p policy) addrRefusal(addr netip.Addr) refusal {
	addr = canonical(addr)
	for _, pfx := range p.Prefixes {
		if pfx.Contains(addr) {
			return refusalNone
		}
	}
	return specialRefusal(addr)
}

// check returns why the proxy refuses any of addrs, in canonical form, with
// port, for r, whose target named host; and the error of a failed route
// lookup, for the log. Every address must pass: a name that resolves to a
// public and a private address is refused. The proxy's own listeners are
// refused first, whatever the policy says, then what the policy refuses,
// then this machine's addresses, unless AllowMachine. A NAT64 address is
// also the IPv4 address it embeds, which the translator forwards to, and
// which may be this machine's.
//
// The address checked is the one dialled (see dialAny), so that a name that
// resolves to a public address when checked cannot connect to a private
// one.
func (p *proxy) check(r *http.Request, host string, addrs []netip.Addr, port uint16) (refusal, error) {
	named := p.cfg.Policy.allowsHost(host)
	for _, a := range addrs {
		reaches := []netip.Addr{a}
		if nat64.Contains(a) {
			reaches = append(reaches, embedded4(a))
		}
		for _, b := range reaches {
			if self, err := p.isSelf(netip.AddrPortFrom(b, port), r); self {
				return refusalSelf, err
			}
		}
		if !named {
			if why := p.cfg.Policy.addrRefusal(a); why != refusalNone {
				return why, nil
			}
		}
		if p.cfg.AllowMachine {
			continue
		}
		for _, b := range reaches {
			if mine, err := p.machine.contains(b); mine {
				return refusalMachine, err
			}
		}
	}
	return refusalNone, nil
}

// isSelf reports whether dst, in canonical form, is where the proxy
// listens. A listener on an unspecified address listens on every address of
// the machine, among them the one r came in on and those routed to it.
func (p *proxy) isSelf(dst netip.AddrPort, r *http.Request) (bool, error) {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		if self, err := p.listensOn(local.AddrPort(), dst); self {
			return true, err
		}
	}
	for _, s := range p.cfg.Self {
		if self, err := p.listensOn(s, dst); self {
			return true, err
		}
	}
	return false, nil
}

// listensOn reports whether a listener on s receives connections to dst.
func (p *proxy) listensOn(s, dst netip.AddrPort) (bool, error) {
	if s.Port() != dst.Port() {
		return false, nil
	}
	a := canonical(s.Addr())
	if a.IsUnspecified() {
		return p.machine.contains(dst.Addr())
	}
	return a == dst.Addr(), nil
}
