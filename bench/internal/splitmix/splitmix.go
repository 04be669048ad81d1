// Package splitmix is the key generator of the benchmarks: splitmix64, whose
// index-th number is a bijective mix of the index, so that key sets built
// from disjoint index ranges never share a key.
package splitmix

// golden is splitmix64's increment, 2⁶⁴ divided by the golden ratio.
const golden = 0x9e3779b97f4a7c15

// At returns the index-th number (from 0) of the splitmix64 sequence
// seeded with seed. For a given seed it is one-to-one.
func At(seed, index uint64) uint64 { return Mix(seed + (index+1)*golden) }

// Mix is splitmix64's finalizer, a bijection of the 64-bit numbers: each
// step, an xor with a right shift or a multiplication by an odd number, can
// be undone.
func Mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
