package funnel_test

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/race"
	"github.com/mitzbloom/mitzbloom/internal/sinkbuf"
	"github.com/mitzbloom/mitzbloom/internal/testkeys"
	"github.com/mitzbloom/mitzbloom/strategy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func appendHex[T any](f funnel.Funnel[T], v T) string {
	return hex.EncodeToString(funnel.Append(nil, f, v))
}

// TestNetFunnelEncodings checks the bytes of each network funnel against
// what its Java twin feeds: putLong, putBoolean, putBytes(getAddress()) and
// putShort, whose encodings TestSinkEncodings pins to Guava's. The Java
// interop test in ../bloom runs the twins themselves.
func TestNetFunnelEncodings(t *testing.T) {
	a := netip.MustParseAddr
	ap := netip.MustParseAddrPort
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"Uint64(0)", appendHex(funnel.Uint64, 0), "0000000000000000"},
		{"Uint64(0x0102030405060708)", appendHex(funnel.Uint64, 0x0102030405060708), "0807060504030201"},
		{"Uint64(1<<63)", appendHex(funnel.Uint64, 1<<63), "0000000000000080"},
		{"Uint64(max)", appendHex(funnel.Uint64, math.MaxUint64), "ffffffffffffffff"},
		{"Bool(true)", appendHex(funnel.Bool, true), "01"},
		{"Bool(false)", appendHex(funnel.Bool, false), "00"},

		{"Addr(1.2.3.4)", appendHex(funnel.Addr, a("1.2.3.4")), "01020304"},
		{"Addr(0.0.0.0)", appendHex(funnel.Addr, a("0.0.0.0")), "00000000"},
		{"Addr(::ffff:1.2.3.4)", appendHex(funnel.Addr, a("::ffff:1.2.3.4")), "01020304"},
		{"Addr(::ffff:0102:0304)", appendHex(funnel.Addr, a("::ffff:0102:0304")), "01020304"},
		{"Addr(::ffff:1.2.3.4%eth0)", appendHex(funnel.Addr, a("::ffff:1.2.3.4%eth0")), "01020304"},
		// IPv4-compatible, not mapped: Java keeps it an Inet6Address.
		{"Addr(::1.2.3.4)", appendHex(funnel.Addr, a("::1.2.3.4")), "00000000000000000000000001020304"},
		{"Addr(::)", appendHex(funnel.Addr, a("::")), "00000000000000000000000000000000"},
		{"Addr(::1)", appendHex(funnel.Addr, a("::1")), "00000000000000000000000000000001"},
		{"Addr(2001:db8::8a2e:370:7334)", appendHex(funnel.Addr, a("2001:db8::8a2e:370:7334")), "20010db80000000000008a2e03707334"},
		{"Addr(fe80::1%eth0)", appendHex(funnel.Addr, a("fe80::1%eth0")), "fe800000000000000000000000000001"},
		{"Addr(zero)", appendHex(funnel.Addr, netip.Addr{}), ""},

		{"AddrPort(1.2.3.4:443)", appendHex(funnel.AddrPort, ap("1.2.3.4:443")), "01020304bb01"},
		{"AddrPort([::ffff:10.0.0.1]:80)", appendHex(funnel.AddrPort, ap("[::ffff:10.0.0.1]:80")), "0a0000015000"},
		{"AddrPort([::1]:65535)", appendHex(funnel.AddrPort, ap("[::1]:65535")), "00000000000000000000000000000001ffff"},
		{"AddrPort([fe80::1%eth0]:32768)", appendHex(funnel.AddrPort, ap("[fe80::1%eth0]:32768")), "fe8000000000000000000000000000010080"},
		{"AddrPort(zero)", appendHex(funnel.AddrPort, netip.AddrPort{}), "0000"},
		{"AddrPort(zero Addr, 80)", appendHex(funnel.AddrPort, netip.AddrPortFrom(netip.Addr{}, 80)), "5000"},

		{"IP(4 bytes)", appendHex(funnel.IP, net.IP{1, 2, 3, 4}), "01020304"},
		{"IP(ParseIP(1.2.3.4)), 16 bytes", appendHex(funnel.IP, net.ParseIP("1.2.3.4")), "01020304"},
		{"IP(::1.2.3.4)", appendHex(funnel.IP, net.ParseIP("::1.2.3.4")), "00000000000000000000000001020304"},
		{"IP(2001:db8::8a2e:370:7334)", appendHex(funnel.IP, net.ParseIP("2001:db8::8a2e:370:7334")), "20010db80000000000008a2e03707334"},
		{"IP(nil)", appendHex(funnel.IP, nil), ""},
		{"IP(empty)", appendHex(funnel.IP, net.IP{}), ""},
		{"IP(3 bytes)", appendHex(funnel.IP, net.IP{1, 2, 3}), "010203"},
		{"IP(5 bytes)", appendHex(funnel.IP, net.IP{1, 2, 3, 4, 5}), "0102030405"},
		{"IP(17 bytes)", appendHex(funnel.IP, make(net.IP, 17)), "0000000000000000000000000000000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.got)
		})
	}
}

// randomAddr returns IPv4, IPv4-mapped, IPv4-compatible and other IPv6
// addresses, some with zones, and some with few bits set, as real ones have.
func randomAddr(r *rand.Rand) netip.Addr {
	var b [16]byte
	for i := range b {
		if r.IntN(3) > 0 {
			b[i] = byte(r.Uint32())
		}
	}
	var a netip.Addr
	switch r.IntN(5) {
	case 0:
		a = netip.AddrFrom4([4]byte(b[:4]))
	case 1:
		a = netip.AddrFrom16(netip.AddrFrom4([4]byte(b[:4])).As16()) // ::ffff:a.b.c.d
	case 2:
		var c [16]byte
		copy(c[12:], b[:4])
		a = netip.AddrFrom16(c) // ::a.b.c.d
	default:
		a = netip.AddrFrom16(b)
	}
	if a.Is6() && r.IntN(4) == 0 {
		a = a.WithZone([]string{"eth0", "1", "lo"}[r.IntN(3)])
	}
	return a
}

// javaAddress returns the bytes of Java's InetAddress.getAddress for a, by
// way of net.IP's To4 rather than the netip code that funnel.Addr uses: 4
// bytes for IPv4 and IPv4-mapped addresses, 16 for any other.
func javaAddress(a netip.Addr) []byte {
	ip := net.IP(a.AsSlice())
	if v4 := ip.To4(); v4 != nil {
		return v4
	}
	return ip.To16()
}

// TestAddrFunnelsAgree checks, over many addresses, that Addr feeds
// Java's getAddress bytes, that an IPv4 address and its mapped form, an
// address with and without its zone, and net.IP and netip.Addr all feed the
// same, and that AddrPort appends the port to Addr's bytes.
func TestAddrFunnelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kinds := map[int]int{}
	for range 5000 {
		a := randomAddr(r)
		got := funnel.Append(nil, funnel.Addr, a)
		kinds[len(got)]++
		require.Equal(t, javaAddress(a), got, "Addr(%v)", a)

		require.Equal(t, got, funnel.Append(nil, funnel.Addr, a.WithZone("")), "zone of %v", a)
		require.Equal(t, got, funnel.Append(nil, funnel.Addr, a.Unmap()), "Unmap of %v", a)
		if a.Is4() {
			require.Equal(t, got, funnel.Append(nil, funnel.Addr, netip.AddrFrom16(a.As16())), "mapped form of %v", a)
		}

		ip := net.IP(a.AsSlice()) // 4 bytes for IPv4, 16 for all IPv6
		require.Equal(t, got, funnel.Append(nil, funnel.IP, ip), "IP(%v) of %d bytes", ip, len(ip))
		require.Equal(t, got, funnel.Append(nil, funnel.IP, ip.To16()), "IP(%v) of 16 bytes", ip)

		port := uint16(r.Uint32())
		want := binary.LittleEndian.AppendUint16(got, port)
		require.Equal(t, want, funnel.Append(nil, funnel.AddrPort, netip.AddrPortFrom(a, port)), "AddrPort(%v, %d)", a, port)
	}
	// Both lengths must have been tried, or the loop proves half of it.
	assert.Positive(t, kinds[4])
	assert.Positive(t, kinds[16])
	assert.Len(t, kinds, 2)
}

// TestUint64MatchesInt64 checks that Uint64 feeds what Int64 (Guava's
// longFunnel) feeds for the same bits.
func TestUint64MatchesInt64(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		v := r.Uint64()
		require.Equal(t, funnel.Append(nil, funnel.Int64, int64(v)), funnel.Append(nil, funnel.Uint64, v), "%#x", v)
	}
}

// TestZeroValuesCannotCollide checks that the zero Addr, AddrPort and a nil
// IP feed something no real address feeds: every valid value feeds 4 or 16
// bytes (6 or 18 with a port).
func TestZeroValuesCannotCollide(t *testing.T) {
	assert.Empty(t, funnel.Append(nil, funnel.Addr, netip.Addr{}))
	assert.Empty(t, funnel.Append(nil, funnel.IP, nil))
	assert.Len(t, funnel.Append(nil, funnel.AddrPort, netip.AddrPort{}), 2)

	filter, err := bloom.New(funnel.Addr, 1000, 0.001)
	require.NoError(t, err)
	filter.Put(netip.Addr{})
	for _, s := range []string{"0.0.0.0", "::", "::ffff:0.0.0.0"} {
		assert.False(t, filter.MightContain(netip.MustParseAddr(s)), "%s in a filter holding only the zero Addr", s)
	}
	assert.True(t, filter.MightContain(netip.Addr{}))
}

func TestNetFunnelNamesAndEquality(t *testing.T) {
	for _, tc := range []struct {
		f    any
		want string
	}{
		{funnel.Uint64, "funnel.Uint64"},
		{funnel.Bool, "funnel.Bool"},
		{funnel.Addr, "funnel.Addr"},
		{funnel.AddrPort, "funnel.AddrPort"},
		{funnel.IP, "funnel.IP"},
	} {
		assert.Equal(t, tc.want, fmt.Sprint(tc.f))
	}
	assert.True(t, funnel.Equal(funnel.Addr, funnel.Addr))
	assert.True(t, funnel.Equal(funnel.Sequential(funnel.IP), funnel.Sequential(funnel.IP)))
	assert.False(t, funnel.Equal(funnel.Uint64, funnel.Func[uint64](func(v uint64, into funnel.Sink) { into.PutInt64(int64(v)) })))
}

// TestNetFunnelZeroAllocs requires the network funnels to feed a Sink, and
// a filter to Put and query with them, without allocating: the address
// bytes travel as integers, since a slice of a local array passed to
// Sink.PutBytes would escape.
func TestNetFunnelZeroAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop items at random, so allocation counts mean nothing; .ci/run also runs the tests without -race")
	}
	v4 := netip.MustParseAddr("192.0.2.1")
	v6 := netip.MustParseAddr("2001:db8::1%eth0")
	mapped := netip.MustParseAddr("::ffff:192.0.2.1")
	allocs(t, funnel.Uint64, 1<<63)
	allocs(t, funnel.Bool, true)
	for _, a := range []netip.Addr{v4, v6, mapped, {}} {
		allocs(t, funnel.Addr, a)
		allocs(t, funnel.AddrPort, netip.AddrPortFrom(a, 443))
	}
	for _, ip := range []net.IP{net.ParseIP("192.0.2.1"), net.ParseIP("192.0.2.1").To4(), net.ParseIP("2001:db8::1"), nil, {1, 2, 3}} {
		allocs(t, funnel.IP, ip)
	}
}

func allocs[T any](t *testing.T, f funnel.Funnel[T], v T) {
	t.Helper()
	var b sinkbuf.Buffer
	b.PutBytes(make([]byte, 64))
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		b.Reset()
		f.Funnel(v, &b)
	}), "%v(%v) into a Sink", f, v)
	for _, s := range []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64} {
		filter, err := bloom.New(f, 1000, 0.01, bloom.WithStrategy(s))
		require.NoError(t, err)
		assert.Zero(t, testing.AllocsPerRun(1000, func() { filter.Put(v) }), "Put %v(%v) %v", f, v, s)
		assert.Zero(t, testing.AllocsPerRun(1000, func() { filter.MightContain(v) }), "MightContain %v(%v) %v", f, v, s)
	}
}

// TestFlowTagPreventsCollision shows why flowFunnel (example_test.go) puts
// each address's length in front of it. For random flows from an IPv6 source
// to an IPv4 destination, it re-reads the untagged bytes as a flow from an
// IPv4 source to an IPv6 destination: a different flow with the same bytes,
// so the same hash and a certain false positive. Tagged, the two differ,
// and every tagged encoding decodes back to its flow, so no two flows share
// one.
func TestFlowTagPreventsCollision(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	collisions := 0
	for range 1000 {
		src := randomAddr(r)
		if src.Unmap().Is4() {
			continue
		}
		flow := Flow{
			Proto: uint8(r.Uint32()),
			Src:   netip.AddrPortFrom(src, uint16(r.Uint32())),
			Dst:   netip.AddrPortFrom(netip.AddrFrom4([4]byte(testkeys.Bytes(r, 4))), uint16(r.Uint32())),
		}
		b := funnel.Append(nil, untaggedFlowFunnel, flow)
		require.Len(t, b, 1+16+2+4+2)
		lookalike := Flow{
			Proto: b[0],
			Src:   netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[1:5])), binary.LittleEndian.Uint16(b[5:7])),
			Dst:   netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[7:23])), binary.LittleEndian.Uint16(b[23:25])),
		}
		if lookalike.Dst.Addr().Is4In6() {
			continue // fed as 4 bytes, so not a lookalike; needs 10 zero bytes in a row
		}
		require.NotEqual(t, flow, lookalike)
		require.Equal(t, b, funnel.Append(nil, untaggedFlowFunnel, lookalike), "untagged %v and %v", flow, lookalike)
		require.NotEqual(t, funnel.Append(nil, flowFunnel, flow), funnel.Append(nil, flowFunnel, lookalike), "tagged %v and %v", flow, lookalike)
		collisions++
	}
	assert.Greater(t, collisions, 500, "too few flows tried")

	for range 5000 {
		flow := Flow{
			Proto: uint8(r.Uint32()),
			Src:   netip.AddrPortFrom(randomAddr(r), uint16(r.Uint32())),
			Dst:   netip.AddrPortFrom(randomAddr(r), uint16(r.Uint32())),
		}
		if r.IntN(20) == 0 {
			flow.Src = netip.AddrPort{}
		}
		got, err := decodeTaggedFlow(funnel.Append(nil, flowFunnel, flow))
		require.NoError(t, err, "%v", flow)
		// The funnel drops zones and maps ::ffff:a.b.c.d to a.b.c.d, as Java does.
		want := flow
		want.Src = netip.AddrPortFrom(flow.Src.Addr().Unmap().WithZone(""), flow.Src.Port())
		want.Dst = netip.AddrPortFrom(flow.Dst.Addr().Unmap().WithZone(""), flow.Dst.Port())
		require.Equal(t, want, got)
	}
}

// decodeTaggedFlow inverts flowFunnel, which shows that it is injective.
func decodeTaggedFlow(b []byte) (Flow, error) {
	var f Flow
	if len(b) < 1 {
		return f, fmt.Errorf("no protocol")
	}
	f.Proto, b = b[0], b[1:]
	for _, ap := range []*netip.AddrPort{&f.Src, &f.Dst} {
		if len(b) < 1 {
			return f, fmt.Errorf("no address length")
		}
		n := int(b[0])
		if n != 0 && n != 4 && n != 16 || len(b) < 1+n+2 {
			return f, fmt.Errorf("bad address length %d for %d bytes", n, len(b))
		}
		var a netip.Addr
		if n > 0 {
			a, _ = netip.AddrFromSlice(b[1 : 1+n])
		}
		*ap = netip.AddrPortFrom(a, binary.LittleEndian.Uint16(b[1+n:]))
		b = b[1+n+2:]
	}
	if len(b) != 0 {
		return f, fmt.Errorf("%d bytes left over", len(b))
	}
	return f, nil
}

// TestLoginTagPreventsCollision shows why loginFunnel (example_test.go) puts
// the name's length in front of it: a name of 12 or more bytes with an IPv4
// address feeds, untagged, the same bytes as the name 12 bytes shorter with
// an IPv6 address made of those 12 bytes and the IPv4 address.
func TestLoginTagPreventsCollision(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const letters = "abcdefghijklmnopqrstuvwxyz.@-_0123456789"
	for range 1000 {
		name := make([]byte, 12+r.IntN(20))
		for i := range name {
			name[i] = letters[r.IntN(len(letters))]
		}
		login := Login{string(name), netip.AddrPortFrom(netip.AddrFrom4([4]byte(testkeys.Bytes(r, 4))), uint16(r.Uint32()))}
		cut := len(name) - 12
		v6 := [16]byte(append(append([]byte(nil), name[cut:]...), login.From.Addr().AsSlice()...))
		lookalike := Login{string(name[:cut]), netip.AddrPortFrom(netip.AddrFrom16(v6), login.From.Port())}

		require.Equal(t, funnel.Append(nil, untaggedLoginFunnel, login), funnel.Append(nil, untaggedLoginFunnel, lookalike), "untagged %v and %v", login, lookalike)
		tagged, taggedLookalike := funnel.Append(nil, loginFunnel, login), funnel.Append(nil, loginFunnel, lookalike)
		require.NotEqual(t, tagged, taggedLookalike, "tagged %v and %v", login, lookalike)
		// The length alone parts them: it is the first thing fed.
		require.NotEqual(t, tagged[:4], taggedLookalike[:4])
	}
}
