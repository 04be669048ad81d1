package main

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// maxTarget bounds a CONNECT target: a 253-byte name, or a bracketed IPv6
// address with a zone, and a port.
const maxTarget = 300

// parseTarget checks the request target of a CONNECT request, which must
// be exactly an authority, host:port (RFC 9110, section 9.3.6), and returns
// it in canonical form: a lower-case host name or an IP address in
// canonical form, and a decimal port. It refuses userinfo, a path, a query
// or a fragment, which net/http would drop from the URL it parses, and IP
// addresses with a zone. Its errors quote the target, for the log.
//
// It reads the target as the client sent it (http.Request.RequestURI), not
// the URL net/http made of it: a filter in front of the proxy that reads
// "a:443@b:443" or "b:443/x" in its own way would otherwise see another
// destination than the one dialled.
func parseTarget(target string) (string, error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return "", fmt.Errorf("CONNECT target %q is not host:port", target)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", fmt.Errorf("CONNECT target %q: port must be a number from 1 to 65535", target)
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if addr.Zone() != "" {
			// A zone names an interface of the proxy's machine:
			// not the client's to choose, and no destination's.
			return "", fmt.Errorf("CONNECT target %q: an IPv6 zone is not a destination", target)
		}
		return netip.AddrPortFrom(canonical(addr), uint16(n)).String(), nil
	}
	if !validHostname(host) {
		return "", fmt.Errorf("CONNECT target %q: %q is neither a host name nor an IP address", target, host)
	}
	return net.JoinHostPort(strings.ToLower(host), strconv.FormatUint(n, 10)), nil
}

// validHostname reports whether s looks like a DNS name: dot-separated labels
// of letters, digits, hyphens and underscores, none empty and none starting
// or ending with a hyphen, 253 bytes at most, with an optional final dot.
func validHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
