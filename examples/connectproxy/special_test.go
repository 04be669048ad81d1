package main

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// registries is the Address Block, Globally Reachable and Name columns of
// the IANA IPv4 and IPv6 Special-Purpose Address Registries, last updated
// 2025-10-09, in their order.
const registries = `
0.0.0.0/8           False "This network"
0.0.0.0/32          False "This host on this network"
10.0.0.0/8          False Private-Use
100.64.0.0/10       False Shared Address Space
127.0.0.0/8         False Loopback
169.254.0.0/16      False Link Local
172.16.0.0/12       False Private-Use
192.0.0.0/24        False IETF Protocol Assignments
192.0.0.0/29        False IPv4 Service Continuity Prefix
192.0.0.8/32        False IPv4 dummy address
192.0.0.9/32        True  Port Control Protocol Anycast
192.0.0.10/32       True  Traversal Using Relays around NAT Anycast
192.0.0.170/32      False NAT64/DNS64 Discovery
192.0.0.171/32      False NAT64/DNS64 Discovery
192.0.2.0/24        False Documentation (TEST-NET-1)
192.31.196.0/24     True  AS112-v4
192.52.193.0/24     True  AMT
192.88.99.0/24      N/A   Deprecated (6to4 Relay Anycast)
192.88.99.2/32      False 6a44-relay anycast address
192.168.0.0/16      False Private-Use
192.175.48.0/24     True  Direct Delegation AS112 Service
198.18.0.0/15       False Benchmarking
198.51.100.0/24     False Documentation (TEST-NET-2)
203.0.113.0/24      False Documentation (TEST-NET-3)
240.0.0.0/4         False Reserved
255.255.255.255/32  False Limited Broadcast
::1/128             False Loopback Address
::/128              False Unspecified Address
::ffff:0:0/96       False IPv4-mapped Address
64:ff9b::/96        True  IPv4-IPv6 Translat.
64:ff9b:1::/48      False IPv4-IPv6 Translat.
100::/64            False Discard-Only Address Block
100:0:0:1::/64      False Dummy IPv6 Prefix
2001::/23           False IETF Protocol Assignments
2001::/32           N/A   TEREDO
2001:1::1/128       True  Port Control Protocol Anycast
2001:1::2/128       True  Traversal Using Relays around NAT Anycast
2001:1::3/128       True  DNS-SD Service Registration Protocol Anycast
2001:2::/48         False Benchmarking
2001:3::/32         True  AMT
2001:4:112::/48     True  AS112-v6
2001:10::/28        N/A   Deprecated (previously ORCHID)
2001:20::/28        True  ORCHIDv2
2001:30::/28        True  Drone Remote ID Protocol Entity Tags (DETs) Prefix
2001:db8::/32       False Documentation
2002::/16           N/A   6to4
2620:4f:8000::/48   True  Direct Delegation AS112 Service
3fff::/20           False Documentation
5f00::/16           False Segment Routing (SRv6) SIDs
fc00::/7            False Unique-Local
fe80::/10           False Link-Local Unicast
`

// TestSpecialsAreTheRegistries checks that specials holds every entry of
// the registries, in their order, with their Globally Reachable value, and
// that every entry marked globally reachable that is refused says why.
func TestSpecialsAreTheRegistries(t *testing.T) {
	var listed []special
	for _, s := range specials {
		if s.global != reachUnlisted {
			listed = append(listed, s)
		}
	}
	lines := strings.Split(strings.TrimSpace(registries), "\n")
	require.Equal(t, len(lines), len(listed), "registry entries")
	for i, line := range lines {
		f := strings.Fields(line)
		s := listed[i]
		assert.Equal(t, netip.MustParsePrefix(f[0]), s.prefix, "entry %d", i)
		assert.Equal(t, strings.Join(f[2:], " "), s.name, f[0])
		want := map[string]reach{"False": reachFalse, "True": reachTrue, "N/A": reachNA}[f[1]]
		assert.Equal(t, want, s.global, f[0])
	}
	for _, s := range specials {
		assert.True(t, strings.HasPrefix(s.rfc, "RFC "), "%v cites %q", s.prefix, s.rfc)
		assert.Equal(t, s.prefix.Masked(), s.prefix, "masked")
		switch {
		case s.embeds:
			assert.Equal(t, reachTrue, s.global)
			assert.Equal(t, refusalNone, s.why, "judged by what it embeds")
		case s.global == reachTrue:
			assert.NotEmpty(t, s.note, "%v is globally reachable: the table says why it is refused", s.prefix)
			assert.NotEqual(t, refusalNone, s.why, s.prefix)
		case s.global != reachUnlisted:
			assert.NotEqual(t, refusalNone, s.why, "%v is not globally reachable", s.prefix)
			assert.Empty(t, s.note, s.prefix)
		}
	}
}

// lastAddr returns the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// midAddr returns the address halfway through p.
func midAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	if i := p.Bits(); i < len(b)*8 {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// ownSamples returns addresses of s, at its start, middle and end, that no
// more specific entry of specials holds: s decides for them.
func ownSamples(s special) []netip.Addr {
	first, last := s.prefix.Addr(), lastAddr(s.prefix)
	var out []netip.Addr
	for _, a := range []netip.Addr{first, first.Next(), midAddr(s.prefix), last.Prev(), last} {
		if !a.IsValid() || !s.prefix.Contains(a) || containsAddr(out, a) {
			continue
		}
		owned := true
		for _, o := range specials {
			if o.prefix.Bits() > s.prefix.Bits() && o.prefix.Contains(a) {
				owned = false
			}
		}
		if owned {
			out = append(out, a)
		}
	}
	return out
}

func containsAddr(as []netip.Addr, a netip.Addr) bool {
	for _, b := range as {
		if a == b {
			return true
		}
	}
	return false
}

// mapped, compatible and nat64Of spell an IPv4 address as IPv6.
func mapped(a netip.Addr) netip.Addr { return netip.AddrFrom16(a.As16()) }

func compatible(a netip.Addr) netip.Addr {
	var b [16]byte
	copy(b[12:], a.AsSlice())
	return netip.AddrFrom16(b)
}

func nat64Of(a netip.Addr) netip.Addr {
	b := nat64.Addr().As16()
	copy(b[12:], a.AsSlice())
	return netip.AddrFrom16(b)
}

// spellings returns a and the other ways to write it that must be judged as
// a is: with zones, and an IPv4 address mapped and IPv4-compatible, with
// and without zones.
func spellings(a netip.Addr) []netip.Addr {
	var out []netip.Addr
	if a.Is4() {
		out = append(out, a, mapped(a), mapped(a).WithZone("eth0"))
		// ::0.0.0.0 and ::0.0.0.1 are :: and ::1, not IPv4-compatible.
		if c := compatible(a); c != netip.IPv6Unspecified() && c != netip.IPv6Loopback() {
			out = append(out, c, c.WithZone("1"))
		}
		return out
	}
	return append(out, a, a.WithZone("eth0"), a.WithZone("1"), a.WithZone("x"))
}

// wantRefusal returns what the table says of a, one of s's own samples.
func wantRefusal(t *testing.T, s special, a netip.Addr) refusal {
	t.Helper()
	switch {
	case s.canonical:
		// Never judged as IPv6: as the IPv4 address it spells.
		b := a.As16()
		return policy{}.addrRefusal(netip.AddrFrom4([4]byte(b[12:])))
	case s.embeds:
		if (policy{}).addrRefusal(embedded4(a)) != refusalNone {
			return refusalReserved
		}
		return refusalNone
	}
	return s.why
}

// TestSpecialsWalk walks the whole table: addresses at the start, middle and
// end of every entry, in every spelling, are judged as the entry says, and
// so are their NAT64 forms (refused as reserved when the IPv4 address is
// refused).
func TestSpecialsWalk(t *testing.T) {
	var p policy
	n := 0
	for _, s := range specials {
		samples := ownSamples(s)
		require.NotEmpty(t, samples, "%v has addresses of its own", s.prefix)
		for _, a := range samples {
			want := wantRefusal(t, s, a)
			for _, sp := range spellings(a) {
				assert.Equal(t, want, p.addrRefusal(sp), "%v (%v, %s)", sp, s.prefix, s.name)
				n++
			}
			if a.Is4() {
				want64 := refusalNone
				if want != refusalNone {
					want64 = refusalReserved
				}
				for _, sp := range spellings(nat64Of(a)) {
					assert.Equal(t, want64, p.addrRefusal(sp), "%v (NAT64 of %v, %s)", sp, s.prefix, s.name)
					n++
				}
			}
		}
	}
	t.Logf("%d entries, %d spellings judged", len(specials), n)
}

// TestSpecialBoundaries checks addresses on both sides of the edges of the
// ranges, written out by hand from the registries.
func TestSpecialBoundaries(t *testing.T) {
	const (
		none     = refusalNone
		reserved = refusalReserved
	)
	for addr, want := range map[string]refusal{
		"0.0.0.0":         refusalUnspecified,
		"0.255.255.255":   reserved,
		"1.0.0.0":         none,
		"9.255.255.255":   none,
		"10.0.0.0":        refusalPrivate,
		"11.0.0.0":        none,
		"100.63.255.255":  none,
		"100.64.0.0":      reserved,
		"100.127.255.255": reserved,
		"100.128.0.0":     none,
		"126.255.255.255": none,
		"127.255.255.255": refusalLoopback,
		"128.0.0.0":       none,
		"169.253.255.255": none,
		"169.254.0.0":     refusalLinkLocal,
		"169.255.0.0":     none,
		"172.15.255.255":  none,
		"172.31.255.255":  refusalPrivate,
		"172.32.0.0":      none,
		"191.255.255.255": none,
		"192.0.0.0":       reserved,
		"192.0.0.9":       reserved, // globally reachable, refused anyway
		"192.0.0.10":      reserved,
		"192.0.0.255":     reserved,
		"192.0.1.0":       none,
		"192.0.2.0":       reserved,
		"192.0.3.0":       none,
		"192.31.196.1":    reserved,
		"192.31.197.0":    none,
		"192.52.193.1":    reserved,
		"192.88.98.255":   none,
		"192.88.99.1":     reserved,
		"192.88.99.2":     reserved,
		"192.88.100.0":    none,
		"192.167.255.255": none,
		"192.168.0.0":     refusalPrivate,
		"192.169.0.0":     none,
		"192.175.48.1":    reserved,
		"198.17.255.255":  none,
		"198.18.0.0":      reserved,
		"198.19.255.255":  reserved,
		"198.20.0.0":      none,
		"198.51.100.1":    reserved,
		"203.0.112.255":   none,
		"203.0.113.1":     reserved,
		"203.0.114.0":     none,
		"223.255.255.255": none,
		"224.0.0.0":       refusalMulticast,
		"239.255.255.255": refusalMulticast,
		"240.0.0.0":       reserved,
		"255.255.255.255": reserved,

		"::":                 refusalUnspecified,
		"::1":                refusalLoopback,
		"::2":                reserved, // IPv4-compatible 0.0.0.2
		"::1.1.1.1":          none,     // IPv4-compatible 1.1.1.1
		"::ffff:1.1.1.1":     none,
		"::ffff:0:1.1.1.1":   reserved, // IPv4-translated, outside 2000::/3
		"64:ff9b::1.1.1.1":   none,
		"64:ff9b::10.0.0.1":  reserved,
		"64:ff9b::127.0.0.1": reserved,
		"64:ff9b::1:1.1.1.1": reserved, // not in the /96
		"64:ff9b:1::1.1.1.1": reserved,
		"100::1":             reserved,
		"100:0:0:1::1":       reserved,
		"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff": reserved,
		"2000::":                                 none,
		"2001::1":                                reserved, // Teredo
		"2001:1::1":                              reserved, // globally reachable, refused anyway
		"2001:1::4":                              reserved,
		"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff": reserved,
		"2001:200::":                             none,
		"2001:2::1":                              reserved,
		"2001:3::1":                              reserved,
		"2001:4:112::1":                          reserved,
		"2001:10::1":                             reserved,
		"2001:20::1":                             reserved,
		"2001:30::1":                             reserved,
		"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff": none,
		"2001:db8::1":                            reserved,
		"2001:db9::":                             none,
		"2002::1":                                reserved,
		"2002:808:808::1":                        reserved, // 6to4 of 8.8.8.8
		"2003::":                                 none,
		"2606:4700::1111":                        none,
		"2620:4f:7fff:ffff:ffff:ffff:ffff:ffff":  none,
		"2620:4f:8000::1":                        reserved,
		"2620:4f:8001::":                         none,
		"3fff::1":                                reserved,
		"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff": reserved,
		"3fff:1000::":                            none,
		"4000::1":                                reserved,
		"5f00::1":                                reserved,
		"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff": reserved,
		"fc00::": refusalPrivate,
		"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff": refusalPrivate,
		"fe00::1": reserved,
		"fe80::1": refusalLinkLocal,
		"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff": refusalLinkLocal,
		"fec0::1": reserved,
		"ff02::1": refusalMulticast,
		"ff0e::1": refusalMulticast,
	} {
		assert.Equal(t, want, policy{}.addrRefusal(netip.MustParseAddr(addr)), addr)
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"1.2.3.4":             "1.2.3.4",
		"::ffff:1.2.3.4":      "1.2.3.4",
		"::ffff:1.2.3.4%eth0": "1.2.3.4",
		"::1.2.3.4":           "1.2.3.4",
		"::1.2.3.4%x":         "1.2.3.4",
		"::2":                 "0.0.0.2",
		"::":                  "::",
		"::1":                 "::1",
		"::1%lo":              "::1",
		"fe80::1%eth0":        "fe80::1",
		"2001:db8::1%25":      "2001:db8::1",
		"64:ff9b::1.2.3.4":    "64:ff9b::102:304", // a different destination: not IPv4
		"::ffff:0:1.2.3.4":    "::ffff:0:102:304",
	} {
		got := canonical(netip.MustParseAddr(in))
		assert.Equal(t, want, got.String(), in)
		assert.Equal(t, got, canonical(got), "canonical is idempotent: %s", in)
	}
}

// TestSpecialLookupIsLongestMatch checks specialFor against a naive longest
// prefix match over random addresses inside and around the entries.
func TestSpecialLookupIsLongestMatch(t *testing.T) {
	var seed uint64 = 0x5eed
	next := func() uint64 { // splitmix64
		seed += 0x9e3779b97f4a7c15
		z := seed
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
	for range 20000 {
		s := specials[next()%uint64(len(specials))]
		b := s.prefix.Addr().AsSlice()
		r := make([]byte, 16)
		binary.BigEndian.PutUint64(r, next())
		binary.BigEndian.PutUint64(r[8:], next())
		// Keep a random number of the prefix's leading bits, so that
		// the address is inside, or just outside, the entry.
		keep := max(0, s.prefix.Bits()-int(next()%3))
		for i := range b {
			for j := range 8 {
				if i*8+j >= keep {
					mask := byte(0x80 >> j)
					b[i] = b[i]&^mask | r[i]&mask
				}
			}
		}
		a, _ := netip.AddrFromSlice(b)
		var best special
		found := false
		for _, o := range specials {
			if o.prefix.Contains(a) && (!found || o.prefix.Bits() > best.prefix.Bits()) {
				best, found = o, true
			}
		}
		got, ok := specialFor(a)
		require.Equal(t, found, ok, a)
		require.Equal(t, best.prefix, got.prefix, a)
	}
}
