// Package testkeys makes the random keys that tests of this module feed to
// Go and to Java alike.
package testkeys

import (
	"math/rand/v2"
	"net/netip"
	"strconv"
)

// Addr returns IPv4, IPv4-mapped, IPv4-compatible and other IPv6
// addresses, some with few bits set as real ones have, and some IPv6 ones
// with a zone. Zones are numeric: Java resolves a named zone to an
// interface of the machine, and rejects any zone on an IPv4-mapped address.
func Addr(r *rand.Rand) netip.Addr {
	var b [16]byte
	for i := range b {
		if r.IntN(3) > 0 {
			b[i] = byte(r.Uint32())
		}
	}
	v4 := netip.AddrFrom4([4]byte(b[:4]))
	switch r.IntN(5) {
	case 0:
		return v4
	case 1:
		return netip.AddrFrom16(v4.As16()) // ::ffff:a.b.c.d
	case 2:
		var c [16]byte
		copy(c[12:], b[:4])
		return netip.AddrFrom16(c) // ::a.b.c.d
	}
	a := netip.AddrFrom16(b)
	if !a.Is4In6() && r.IntN(4) == 0 {
		a = a.WithZone(strconv.Itoa(1 + r.IntN(99)))
	}
	return a
}

// Bytes returns n random bytes.
func Bytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}
