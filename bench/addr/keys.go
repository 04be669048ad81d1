package addr

import (
	"math/rand/v2"
	"net/netip"

	"github.com/mitzbloom/mitzbloom/bench/internal/splitmix"
)

const (
	// Distinct is the number of distinct addresses the stream draws from,
	// and the number of values the filters are sized for.
	Distinct = 1_000_000

	// Seed fixes the addresses and, with [ZipfSeed], the stream.
	Seed = 0x61646472706f7274 // "addrport"
	// ZipfSeed is the second word of the PCG source of the Zipf draws.
	ZipfSeed = 0x7a697066 // "zipf"

	// ZipfS and ZipfV are the s and v of [rand.NewZipf]: the k-th most
	// frequent address is drawn with a probability proportional to
	// (v+k)^−s. With s just above 1, the least that NewZipf accepts, the
	// most frequent address is 7.4% of the stream, and the stream of
	// [StreamLen] keys holds about 215,000 distinct addresses, 75,000 of
	// them in its first 250,000 keys, a [ShortWindow].
	ZipfS = 1.01
	ZipfV = 1.0

	// StreamLen is the length of the precomputed Zipf stream, a power of
	// two so that a cursor wraps with a mask. Benchmarks cycle through it.
	StreamLen = 1 << 20
)

// Key returns the address of an index: an IPv6 address in 2001:db8::/32 for
// one index in ten, and an IPv4 address for the others, each with port 443,
// 80 or an ephemeral port. Key is one-to-one on indexes below 2³²: the IPv4
// address is a bijective mix of the index and the IPv6 address's low 64 bits
// another, so no two indexes share an address, whatever their ports.
func Key(index uint64) netip.AddrPort {
	h := splitmix.Mix(index ^ Seed)
	var port uint16
	switch r := h % 100; {
	case r < 60:
		port = 443
	case r < 75:
		port = 80
	default:
		port = uint16(32768 + (h>>32)%28232) // Linux's ephemeral range
	}
	if index%10 == 9 {
		var a [16]byte
		a[0], a[1], a[2], a[3] = 0x20, 0x01, 0x0d, 0xb8
		lo := splitmix.Mix(index + Seed)
		for i := range 8 {
			a[15-i] = byte(lo >> (8 * i))
		}
		return netip.AddrPortFrom(netip.AddrFrom16(a), port)
	}
	v := mix32(uint32(index) ^ Seed&0xffffffff)
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), port)
}

// mix32 is murmur3's 32-bit finalizer, a bijection of the 32-bit numbers.
func mix32(z uint32) uint32 {
	z = (z ^ z>>16) * 0x85ebca6b
	z = (z ^ z>>13) * 0xc2b2ae35
	return z ^ z>>16
}

// Keys returns the addresses of indexes [from, from+n).
func Keys(from, n int) []netip.AddrPort {
	keys := make([]netip.AddrPort, n)
	for i := range keys {
		keys[i] = Key(uint64(from + i))
	}
	return keys
}

// ZipfKeys returns the stream: n addresses drawn from the [Distinct]
// addresses of indexes [0, Distinct), index k with a probability
// proportional to (ZipfV+k)^−ZipfS, from a PCG source seeded with Seed and
// ZipfSeed. Index 0 is the most frequent; since Key mixes indexes, the
// frequent addresses are spread over the address space.
func ZipfKeys(n int) []netip.AddrPort {
	z := rand.NewZipf(rand.New(rand.NewPCG(Seed, ZipfSeed)), ZipfS, ZipfV, Distinct-1)
	keys := make([]netip.AddrPort, n)
	for i := range keys {
		keys[i] = Key(z.Uint64())
	}
	return keys
}

// AbsentKeys returns n addresses that the stream never draws: those of
// indexes [Distinct, Distinct+n).
func AbsentKeys(n int) []netip.AddrPort { return Keys(Distinct, n) }
