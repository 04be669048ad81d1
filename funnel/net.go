package funnel

import (
	"encoding/binary"
	"net"
	"net/netip"

	"github.com/mitzbloom/mitzbloom/internal/murmur3"
)

// Uint64 feeds a uint64 as 8 bytes, little-endian, as Guava's
// Funnels.longFunnel() does for the long with the same bits (Java has no
// unsigned long; Long.parseUnsignedLong gives it). It is ready to use.
var Uint64 Funnel[uint64] = uint64Funnel{}

// Bool feeds a bool as one byte, 1 for true and 0 for false, as this Java
// funnel does:
//
//	Funnel<Boolean> boolFunnel = (b, into) -> into.putBoolean(b);
//
// Guava has no built-in funnel for booleans. It is ready to use.
var Bool Funnel[bool] = boolFunnel{}

// Addr feeds the bytes of an IP address in network order, as this Java
// funnel does for the InetAddress of the same address:
//
//	Funnel<InetAddress> addrFunnel = (addr, into) -> into.putBytes(addr.getAddress());
//
// An IPv4 address feeds 4 bytes, and so does its IPv4-mapped IPv6 form
// (::ffff:a.b.c.d), because Java has no such form: InetAddress.getByName
// returns an Inet4Address for it, whose getAddress is 4 bytes. Any other IPv6
// address feeds 16 bytes, the IPv4-compatible ::a.b.c.d included, as in Java.
// The zone is dropped, as getAddress drops the scope ID, so fe80::1%eth0 and
// fe80::1 are one value to a filter.
//
// The zero Addr, which is no address, feeds nothing. Every address feeds 4 or
// 16 bytes, so it cannot be mistaken for one; it has no Java counterpart.
//
// Addr is ready to use.
var Addr Funnel[netip.Addr] = addrFunnel{}

// AddrPort feeds the bytes [Addr] feeds for the address, then the port as 2
// bytes, little-endian, as this Java funnel does for the InetSocketAddress of
// the same address and port:
//
//	Funnel<InetSocketAddress> sockFunnel = (sock, into) -> {
//	    into.putBytes(sock.getAddress().getAddress());
//	    into.putShort((short) sock.getPort());
//	};
//
// The cast keeps the low 16 bits of the int port, which are the port. An
// AddrPort whose address is the zero Addr feeds only the port. AddrPort is
// ready to use.
var AddrPort Funnel[netip.AddrPort] = addrPortFunnel{}

// IP feeds the bytes [Addr] feeds for the same address, so net.IP and
// netip.Addr keys can share a filter, and the Java twin is Addr's:
//
//	Funnel<InetAddress> addrFunnel = (addr, into) -> into.putBytes(addr.getAddress());
//
// A 4-byte IP and a 16-byte IPv4-mapped one (what net.ParseIP returns for
// "1.2.3.4") both feed the 4 bytes of To4; other 16-byte IPs feed all 16.
//
// An IP of any other length is not an address, and is fed as it is: nil and
// empty IPs feed nothing, like the zero Addr, and a malformed one its bytes,
// which keeps malformed IPs apart from one another and, being neither 4 nor
// 16 bytes long, from every address. IP never panics. It is ready to use.
var IP Funnel[net.IP] = ipFunnel{}

type uint64Funnel struct{ builtin }

func (uint64Funnel) Funnel(v uint64, into Sink)      { into.PutInt64(int64(v)) }
func (uint64Funnel) String() string                  { return "funnel.Uint64" }
func (uint64Funnel) Sum128(v uint64) (h1, h2 uint64) { return murmur3.Sum64(v) }

type boolFunnel struct{ builtin }

func (boolFunnel) Funnel(v bool, into Sink) { into.PutBool(v) }
func (boolFunnel) String() string           { return "funnel.Bool" }
func (boolFunnel) Sum128(v bool) (h1, h2 uint64) {
	b := [1]byte{0}
	if v {
		b[0] = 1
	}
	return murmur3.Sum128(b[:])
}

type addrFunnel struct{ builtin }

func (addrFunnel) Funnel(a netip.Addr, into Sink)      { putAddr(a, into) }
func (addrFunnel) String() string                      { return "funnel.Addr" }
func (addrFunnel) Sum128(a netip.Addr) (h1, h2 uint64) { return sumAddrPort(a, 0, false) }

type addrPortFunnel struct{ builtin }

func (addrPortFunnel) Funnel(ap netip.AddrPort, into Sink) {
	putAddr(ap.Addr(), into)
	into.PutInt16(int16(ap.Port()))
}
func (addrPortFunnel) String() string { return "funnel.AddrPort" }
func (addrPortFunnel) Sum128(ap netip.AddrPort) (h1, h2 uint64) {
	return sumAddrPort(ap.Addr(), ap.Port(), true)
}

type ipFunnel struct{ builtin }

func (ipFunnel) Funnel(ip net.IP, into Sink) {
	// AddrFromSlice accepts exactly the 4- and 16-byte IPs; a 16-byte
	// IPv4-mapped one becomes a mapped Addr, which putAddr feeds as To4.
	if a, ok := netip.AddrFromSlice(ip); ok {
		putAddr(a, into)
		return
	}
	into.PutBytes(ip)
}
func (ipFunnel) String() string { return "funnel.IP" }
func (ipFunnel) Sum128(ip net.IP) (h1, h2 uint64) {
	if a, ok := netip.AddrFromSlice(ip); ok {
		return sumAddrPort(a, 0, false)
	}
	return murmur3.Sum128(ip)
}

// addrBytes returns the bytes of Java's InetAddress.getAddress for a, in
// b[:n]: n is 4, 16, or 0 for the zero Addr.
func addrBytes(a netip.Addr) (b [16]byte, n int) {
	switch {
	case a.Is4() || a.Is4In6():
		b4 := a.Unmap().As4()
		copy(b[:], b4[:])
		return b, 4
	case a.Is6():
		return a.As16(), 16
	}
	return b, 0
}

// putAddr feeds the bytes of Java's InetAddress.getAddress for a. It feeds
// them as integers whose little-endian bytes are the address bytes, not with
// PutBytes: the hash sees the same bytes either way, but a slice of a local
// array passed through the Sink interface escapes, and would cost an
// allocation on every Put.
func putAddr(a netip.Addr, into Sink) {
	b, n := addrBytes(a)
	switch n {
	case 4:
		into.PutInt32(int32(binary.LittleEndian.Uint32(b[:])))
	case 16:
		into.PutInt64(int64(binary.LittleEndian.Uint64(b[:8])))
		into.PutInt64(int64(binary.LittleEndian.Uint64(b[8:])))
	}
}

// sumAddrPort hashes what AddrPort feeds, or with withPort false what Addr
// feeds. An IPv4 address and its port fit in one word; an IPv6 one is
// hashed from a buffer on the stack, which murmur3 does not retain.
func sumAddrPort(a netip.Addr, port uint16, withPort bool) (h1, h2 uint64) {
	b, n := addrBytes(a)
	if n == 4 {
		v := uint64(binary.LittleEndian.Uint32(b[:]))
		if withPort {
			return murmur3.SumN(v|uint64(port)<<32, 6)
		}
		return murmur3.SumN(v, 4)
	}
	var buf [18]byte
	copy(buf[:], b[:n])
	if withPort {
		binary.LittleEndian.PutUint16(buf[n:], port)
		n += 2
	}
	return murmur3.Sum128(buf[:n])
}
