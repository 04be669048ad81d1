package hashing

import (
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/direct"
	"github.com/mitzbloom/mitzbloom/internal/murmur3"
	"github.com/stretchr/testify/assert"
)

// sumsLikeFed requires f's direct Sum128 to be the hash of the bytes f feeds,
// for every value: a filter uses the direct hash, and Guava hashes the bytes.
func sumsLikeFed[T any](t *testing.T, f funnel.Funnel[T], values ...T) {
	t.Helper()
	d, ok := direct.Of(f).(Hasher[T])
	if !ok {
		t.Fatalf("%v has no direct Sum128", f)
	}
	for _, v := range values {
		b := funnel.Append(nil, f, v)
		w1, w2 := murmur3.Sum128(b)
		if h1, h2 := d.Sum128(v); h1 != w1 || h2 != w2 {
			t.Errorf("%v.Sum128(%v) = %016x%016x, but it feeds %x, which hashes to %016x%016x", f, v, h1, h2, b, w1, w2)
		}
	}
}

func TestDirectSum128(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var (
		ints32  = []int32{0, -1, 1 << 30}
		ints64  = []int64{0, -1, 1 << 62}
		uints64 = []uint64{0, 1<<64 - 1}
		strs    = []string{"", "a", "héllo", "0123456789abcdef0", "\xff\xfe"}
		bytes   = [][]byte{nil, {}, {0}, []byte("0123456789abcdef0123")}
		addrs   = []netip.Addr{{}, netip.MustParseAddr("1.2.3.4"), netip.MustParseAddr("::ffff:1.2.3.4"), netip.MustParseAddr("fe80::1%eth0"), netip.MustParseAddr("::")}
		ips     = []net.IP{nil, {}, {1, 2, 3}, net.ParseIP("1.2.3.4"), net.ParseIP("2001:db8::1"), make(net.IP, 17)}
	)
	for range 200 {
		ints32 = append(ints32, int32(r.Uint32()))
		ints64 = append(ints64, int64(r.Uint64()))
		uints64 = append(uints64, r.Uint64())
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		bytes = append(bytes, b)
		strs = append(strs, string(b))
		var a16 [16]byte
		copy(a16[:], b)
		addrs = append(addrs, netip.AddrFrom4([4]byte(a16[:4])), netip.AddrFrom16(a16))
		ips = append(ips, net.IP(b))
	}
	var addrPorts []netip.AddrPort
	for _, a := range addrs {
		addrPorts = append(addrPorts, netip.AddrPortFrom(a, uint16(r.Uint32())))
	}
	sumsLikeFed(t, funnel.Bytes, bytes...)
	sumsLikeFed(t, funnel.String, strs...)
	sumsLikeFed(t, funnel.Int32, ints32...)
	sumsLikeFed(t, funnel.Int64, ints64...)
	sumsLikeFed(t, funnel.Uint64, uints64...)
	sumsLikeFed(t, funnel.Bool, true, false)
	sumsLikeFed(t, funnel.Addr, addrs...)
	sumsLikeFed(t, funnel.AddrPort, addrPorts...)
	sumsLikeFed(t, funnel.IP, ips...)
}

// TestScalarDirectSum128 requires each scalar funnel's direct hash, which
// a filter uses, to be the hash of the bytes it feeds, which Guava hashes,
// named or not.
func TestScalarDirectSum128(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ints := []int{0, 1, -1, math.MaxInt, math.MinInt}
	uints := []uint{0, 1, math.MaxUint}
	uints32 := []uint32{0, 1, math.MaxUint32}
	floats32 := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00001), math.SmallestNonzeroFloat32, math.MaxFloat32}
	floats64 := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0x7ff8000000000000), math.SmallestNonzeroFloat64, math.MaxFloat64}
	for range 200 {
		ints = append(ints, int(r.Uint64()))
		uints = append(uints, uint(r.Uint64()))
		uints32 = append(uints32, r.Uint32())
		floats32 = append(floats32, math.Float32frombits(r.Uint32()))
		floats64 = append(floats64, math.Float64frombits(r.Uint64()))
	}
	sumsLikeFed(t, funnel.Int, ints...)
	sumsLikeFed(t, funnel.Uint, uints...)
	sumsLikeFed(t, funnel.Uint32, uints32...)
	sumsLikeFed(t, funnel.Float32, floats32...)
	sumsLikeFed(t, funnel.Float64, floats64...)
	sumsLikeFed(t, funnel.Named("price/v1", funnel.Float64), floats64...)
}

// impostor has a Sum128 method of the shape the built-in funnels have, which
// must not be taken for theirs.
type impostor struct{}

func (impostor) Funnel(v string, into funnel.Sink) { into.PutString(v) }
func (impostor) Sum128(string) (h1, h2 uint64)     { return 1, 2 }

// TestHasherSealed requires a funnel's own Sum128 method to be used only
// for built-in funnels, named or not: any other funnel is hashed from the
// bytes it feeds.
func TestHasherSealed(t *testing.T) {
	want1, want2 := Sum128(funnel.String, "hello")
	for name, f := range map[string]funnel.Funnel[string]{
		"impostor":       impostor{},
		"named impostor": funnel.Named("x", impostor{}),
		"named String":   funnel.Named("utf8", funnel.String),
	} {
		h1, h2 := Sum128(f, "hello")
		assert.Equal(t, [2]uint64{want1, want2}, [2]uint64{h1, h2}, "Sum128 %s", name)
		h1, h2 = For(f).Sum128("hello")
		assert.Equal(t, [2]uint64{want1, want2}, [2]uint64{h1, h2}, "For %s", name)
	}
	_, builtin := For(funnel.Named("utf8", funnel.String)).(buffered[string])
	assert.False(t, builtin, "a named built-in funnel keeps the fast path")
	_, buf := For[string](impostor{}).(buffered[string])
	assert.True(t, buf, "an impostor is hashed through a buffer")
}
