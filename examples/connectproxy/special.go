package main

import (
	"net/netip"
	"slices"
)

// The ranges below are every entry of the IANA IPv4 and IPv6 Special-Purpose
// Address Registries (RFC 6890, as updated by RFC 8190; the registries as
// last updated 2025-10-09), in the registries' order, followed by the ranges
// those registries leave to others that are not global unicast either:
// multicast, the deprecated site-local and IPv4-compatible forms, and the
// IPv6 space outside 2000::/3 that IANA has not allocated for unicast.
//
// Every address is judged by the most specific range that contains it, so a
// sub-entry (192.0.0.9/32 within 192.0.0.0/24) decides for its addresses.
// Every entry that the registry does not mark globally reachable is
// refused. Of those it marks globally reachable, all but one are refused
// too, each for the reason its note gives: they are anycast services that
// the nearest instance answers, which is the proxy's own network operator's,
// or identifiers that are not locators, and no client of a forward proxy
// needs a tunnel to them. The exception is the NAT64 well-known prefix,
// which on an IPv6-only network is how every IPv4 destination is spelled:
// it is judged by the IPv4 address it embeds. -allow-hosts opens any of
// them.

// reach is what a registry says in its Globally Reachable column.
type reach int8

const (
	reachFalse    reach = iota
	reachTrue           // globally reachable
	reachNA             // "N/A": the deprecated entries and the tunnels that embed IPv4
	reachUnlisted       // not an entry of the special-purpose registries
)

// A special is an address range that is not plain global unicast, with
// where it comes from and why the proxy refuses it.
type special struct {
	prefix netip.Prefix
	name   string // the registry's name for the entry
	rfc    string // the documents that define it
	global reach
	why    refusal // refusalNone for the ranges that are allowed
	// embeds is set for 64:ff9b::/96, whose addresses are refused, as
	// reserved, when the IPv4 address in their last 32 bits is.
	embeds bool
	// canonical is set for the IPv4-mapped and IPv4-compatible ranges,
	// which canonical turns into IPv4 before any range is looked up, so
	// that they are never judged as IPv6 at all.
	canonical bool
	// note says why an entry marked globally reachable is refused.
	note string
}

// Notes for the globally reachable entries the proxy refuses.
const (
	anycastNote = "an anycast service address: the nearest instance answers, which is in the proxy's own network, not the client's"
	as112Note   = "AS112 anycast DNS sinks, often run inside the proxy's own network; they serve DNS on port 53 only"
	amtNote     = "anycast AMT relays, often the proxy's own network operator's; AMT runs over UDP, which no tunnel carries"
	idNote      = "identifiers, not locators: a HIP or DRIP stack maps them to the addresses that are dialled"
)

func sp(prefix, name, rfc string, global reach, why refusal) special {
	return special{prefix: netip.MustParsePrefix(prefix), name: name, rfc: rfc, global: global, why: why}
}

// reachable returns an entry marked globally reachable that is refused
// anyway, as reserved, for the reason note.
func reachable(prefix, name, rfc, note string) special {
	s := sp(prefix, name, rfc, reachTrue, refusalReserved)
	s.note = note
	return s
}

var specials = []special{
	// IANA IPv4 Special-Purpose Address Registry.
	sp("0.0.0.0/8", `"This network"`, "RFC 791 §3.2", reachFalse, refusalReserved),
	sp("0.0.0.0/32", `"This host on this network"`, "RFC 1122 §3.2.1.3", reachFalse, refusalUnspecified),
	sp("10.0.0.0/8", "Private-Use", "RFC 1918", reachFalse, refusalPrivate),
	sp("100.64.0.0/10", "Shared Address Space", "RFC 6598", reachFalse, refusalReserved),
	sp("127.0.0.0/8", "Loopback", "RFC 1122 §3.2.1.3", reachFalse, refusalLoopback),
	sp("169.254.0.0/16", "Link Local", "RFC 3927", reachFalse, refusalLinkLocal),
	sp("172.16.0.0/12", "Private-Use", "RFC 1918", reachFalse, refusalPrivate),
	sp("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890 §2.1", reachFalse, refusalReserved),
	sp("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", reachFalse, refusalReserved),
	sp("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", reachFalse, refusalReserved),
	reachable("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", anycastNote),
	reachable("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", anycastNote),
	sp("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050 §2.2", reachFalse, refusalReserved),
	sp("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050 §2.2", reachFalse, refusalReserved),
	sp("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", reachFalse, refusalReserved),
	reachable("192.31.196.0/24", "AS112-v4", "RFC 7535", as112Note),
	reachable("192.52.193.0/24", "AMT", "RFC 7450", amtNote),
	sp("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", reachNA, refusalReserved),
	sp("192.88.99.2/32", "6a44-relay anycast address", "RFC 6751", reachFalse, refusalReserved),
	sp("192.168.0.0/16", "Private-Use", "RFC 1918", reachFalse, refusalPrivate),
	reachable("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", as112Note),
	sp("198.18.0.0/15", "Benchmarking", "RFC 2544", reachFalse, refusalReserved),
	sp("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", reachFalse, refusalReserved),
	sp("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", reachFalse, refusalReserved),
	sp("240.0.0.0/4", "Reserved", "RFC 1112 §4", reachFalse, refusalReserved),
	sp("255.255.255.255/32", "Limited Broadcast", "RFC 8190, RFC 919 §7", reachFalse, refusalReserved),

	// IANA IPv6 Special-Purpose Address Registry.
	sp("::1/128", "Loopback Address", "RFC 4291", reachFalse, refusalLoopback),
	sp("::/128", "Unspecified Address", "RFC 4291", reachFalse, refusalUnspecified),
	{prefix: netip.MustParsePrefix("::ffff:0:0/96"), name: "IPv4-mapped Address", rfc: "RFC 4291", global: reachFalse, why: refusalReserved, canonical: true},
	{prefix: nat64, name: "IPv4-IPv6 Translat.", rfc: "RFC 6052", global: reachTrue, why: refusalNone, embeds: true},
	sp("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "RFC 8215", reachFalse, refusalReserved),
	sp("100::/64", "Discard-Only Address Block", "RFC 6666", reachFalse, refusalReserved),
	sp("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", reachFalse, refusalReserved),
	sp("2001::/23", "IETF Protocol Assignments", "RFC 2928", reachFalse, refusalReserved),
	sp("2001::/32", "TEREDO", "RFC 4380, RFC 8190", reachNA, refusalReserved),
	reachable("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", anycastNote),
	reachable("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", anycastNote),
	reachable("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", anycastNote),
	sp("2001:2::/48", "Benchmarking", "RFC 5180, RFC Errata 1752", reachFalse, refusalReserved),
	reachable("2001:3::/32", "AMT", "RFC 7450", amtNote),
	reachable("2001:4:112::/48", "AS112-v6", "RFC 7535", as112Note),
	sp("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", reachNA, refusalReserved),
	reachable("2001:20::/28", "ORCHIDv2", "RFC 7343", idNote),
	reachable("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", idNote),
	sp("2001:db8::/32", "Documentation", "RFC 3849", reachFalse, refusalReserved),
	sp("2002::/16", "6to4", "RFC 3056", reachNA, refusalReserved),
	reachable("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", as112Note),
	sp("3fff::/20", "Documentation", "RFC 9637", reachFalse, refusalReserved),
	sp("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", reachFalse, refusalReserved),
	sp("fc00::/7", "Unique-Local", "RFC 4193, RFC 8190", reachFalse, refusalPrivate),
	sp("fe80::/10", "Link-Local Unicast", "RFC 4291", reachFalse, refusalLinkLocal),

	// Not in the special-purpose registries.
	sp("224.0.0.0/4", "Multicast", "RFC 5771 (IANA IPv4 Multicast Address Space)", reachUnlisted, refusalMulticast),
	sp("ff00::/8", "Multicast", "RFC 4291 §2.7 (IANA IPv6 Multicast Address Space)", reachUnlisted, refusalMulticast),
	sp("fec0::/10", "Site-Local (deprecated)", "RFC 3879", reachUnlisted, refusalReserved),
	{prefix: netip.MustParsePrefix("::/96"), name: "IPv4-Compatible (deprecated)", rfc: "RFC 4291 §2.5.5.1", global: reachUnlisted, why: refusalReserved, canonical: true},
	// What is outside 2000::/3 and the entries above is reserved by the
	// IETF: no unicast address there is reachable.
	sp("::/0", "Reserved by IETF (IANA IPv6 Address Space)", "RFC 4291 §2.4", reachUnlisted, refusalReserved),
	sp("2000::/3", "Global Unicast (IANA IPv6 Address Space)", "RFC 4291 §2.4", reachUnlisted, refusalNone),
}

// nat64 is the NAT64 well-known prefix (RFC 6052 §2.1), whose addresses
// a translator forwards to the IPv4 address in their last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// bySpecificity is specials, most specific first, so that the first range
// that contains an address is the one that decides.
var bySpecificity = func() []special {
	s := slices.Clone(specials)
	slices.SortStableFunc(s, func(a, b special) int { return b.prefix.Bits() - a.prefix.Bits() })
	return s
}()

// specialFor returns the most specific range that contains a, an address in
// canonical form, and whether there is one: there is none for most IPv4
// addresses, which are global unicast.
func specialFor(a netip.Addr) (special, bool) {
	for _, s := range bySpecificity {
		if s.prefix.Contains(a) {
			return s, true
		}
	}
	return special{}, false
}

// specialRefusal returns why the ranges refuse a, an address in canonical
// form, or refusalNone.
func specialRefusal(a netip.Addr) refusal {
	s, ok := specialFor(a)
	switch {
	case !ok:
		return refusalNone
	case s.embeds:
		if specialRefusal(embedded4(a)) != refusalNone {
			return refusalReserved
		}
		return refusalNone
	}
	return s.why
}

// embedded4 returns the IPv4 address in the last 32 bits of a, an IPv6
// address: the one a NAT64 translator (RFC 6052 §2.2, prefix length 96)
// forwards to.
func embedded4(a netip.Addr) netip.Addr {
	b := a.As16()
	return netip.AddrFrom4([4]byte(b[12:]))
}

// canonical returns the one form in which a is judged and dialled: without
// an IPv6 zone, and as IPv4 when it is an IPv4-mapped address
// (::ffff:a.b.c.d) or an IPv4-compatible one (::a.b.c.d, other than :: and
// ::1). A zone names one of this machine's interfaces, which no destination
// beyond it has, and netip.Prefix.Contains is false for any zoned address.
func canonical(a netip.Addr) netip.Addr {
	a = a.WithZone("").Unmap()
	if a.Is6() {
		b := a.As16()
		if [12]byte(b[:12]) == [12]byte{} && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback() {
			return netip.AddrFrom4([4]byte(b[12:]))
		}
	}
	return a
}
