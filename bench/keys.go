package bench

import (
	"strconv"

	"github.com/mitzbloom/mitzbloom/bench/internal/splitmix"
)

// Every key is a pure function of its index, so the Go workloads and the Java
// harness (java/GuavaBench.java, which repeats these functions) time the same
// keys without exchanging them, and any key can be made without making the
// ones before it. The index ranges below are disjoint, so a key of one range
// never equals a key of another: both key functions are one-to-one on
// indexes below 2⁴⁰.
const (
	// Seed starts the splitmix64 sequence of the int64 keys.
	Seed = 0x6d69747a626c6f6f // "mitzbloo"

	// AbsentBase is the index of the first key a full filter was never given:
	// present keys have indexes [0, n), absent probes [AbsentBase, …).
	AbsentBase = 1 << 38
	// HeldOutBase is the index of the first held-out key that the measured
	// false-positive rate counts, disjoint from the probes.
	HeldOutBase = 1 << 39
	// shuffleBase indexes the random numbers that shuffle the probes.
	shuffleBase = 3 << 38
)

// Uint64 returns the index-th number of a splitmix64 generator seeded with
// [Seed] (the first number is Uint64(0)). The mapping from index to number is
// one-to-one.
func Uint64(index uint64) uint64 { return splitmix.At(Seed, index) }

// Int64Key returns the int64 key of an index: [Uint64] as a signed number.
func Int64Key(index uint64) int64 { return int64(Uint64(index)) }

// HostPortKey returns the host:port key of an index, such as
// "10.183.4.97:35119": a permutation of the index's low 40 bits, written as
// the last three octets of an address in 10.0.0.0/8 and a port. It is
// one-to-one on indexes below 2⁴⁰, which all key ranges are.
func HostPortKey(index uint64) string {
	v := mix40(index)
	var buf [len("10.255.255.255:65535")]byte
	b := append(buf[:0], "10."...)
	b = strconv.AppendUint(b, v>>32&0xff, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, v>>24&0xff, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, v>>16&0xff, 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, v&0xffff, 10)
	return string(b)
}

// mix40 permutes the numbers below 2⁴⁰: multiplying by an odd number and
// xoring in a right shift are both invertible modulo 2⁴⁰. The mixing spreads
// consecutive indexes over all octets and ports.
func mix40(x uint64) uint64 {
	const mask = 1<<40 - 1
	x &= mask
	x = x * 0x9e3779b97f4a7c15 & mask
	x ^= x >> 21
	x = x * 0xbf58476d1ce4e5b9 & mask
	return x ^ x>>19
}

// ProbeIndexes returns the indexes of the keys a MightContain benchmark on a
// full filter of n keys asks about: h = min(n, half) present ones spread
// evenly over [0, n), and h absent ones from AbsentBase on, shuffled
// together so that the answers come in no pattern a branch predictor could
// learn.
func ProbeIndexes(n uint64, half int) []uint64 {
	h := min(n, uint64(half))
	idx := make([]uint64, 0, 2*h)
	for j := range h {
		idx = append(idx, j*n/h, AbsentBase+j)
	}
	// Fisher–Yates, drawing from its own range of the generator.
	for t, j := 0, len(idx)-1; j > 0; t, j = t+1, j-1 {
		r := Uint64(shuffleBase+uint64(t)) % uint64(j+1)
		idx[j], idx[r] = idx[r], idx[j]
	}
	return idx
}
