package raw_test

import (
	"math/rand/v2"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/internal/probe"
	"github.com/mitzbloom/mitzbloom/strategy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIndexes checks both strategies' index sequences against Guava's for
// create(stringFunnel(UTF_8), 1000, 0.01): 9600 bits, k = 7 (docs/guava.md §2.2).
func TestIndexes(t *testing.T) {
	tests := []struct {
		value        string
		mitz64       []uint64
		mitz32       []uint64
		h1, h2       int64
		indexBitSize uint64
	}{
		{"hello", []uint64{898, 8731, 6964, 3405, 1638, 9471, 5912}, []uint64{8885, 2455, 4196, 7758, 6017, 4276, 7064}, -3758069500696749310, 6565844092913065241, 9600},
		{"guava", []uint64{6274, 9469, 4856, 8051, 3438, 6633, 2020}, []uint64{5688, 8430, 1572, 4314, 7056, 198, 2940}, 585213101008019074, -4371740661468187013, 9600},
	}
	for _, tc := range tests {
		h1, h2 := raw.Sum128(funnel.String, tc.value)
		require.Equal(t, tc.h1, int64(h1))
		require.Equal(t, tc.h2, int64(h2))

		got64 := raw.AppendIndexes(nil, strategy.Murmur128Mitz64, h1, h2, 7, int64(tc.indexBitSize))
		got32 := raw.AppendIndexes([]int64{}, strategy.Murmur128Mitz32, h1, h2, 7, int64(tc.indexBitSize))
		assert.Equal(t, toInt64(tc.mitz64), got64, "MURMUR128_MITZ_64 %q", tc.value)
		assert.Equal(t, toInt64(tc.mitz32), got32, "MURMUR128_MITZ_32 %q", tc.value)

		// Put sets exactly those bits, and MightContain sees them.
		for _, s := range []strategy.Strategy{strategy.Murmur128Mitz64, strategy.Murmur128Mitz32} {
			bits := bitarray.New(150)
			p := probe.For(s == strategy.Murmur128Mitz32, false)
			assert.False(t, p.MightContain(h1, h2, 7, bits))
			assert.True(t, p.Put(h1, h2, 7, bits))
			assert.False(t, p.Put(h1, h2, 7, bits), "second put changes nothing")
			assert.True(t, p.MightContain(h1, h2, 7, bits))
			want := tc.mitz64
			if s == strategy.Murmur128Mitz32 {
				want = tc.mitz32
			}
			for _, i := range want {
				assert.True(t, bits.Get(i), "%v bit %d", s, i)
			}
			assert.EqualValues(t, 7, bits.Count(), "%v sets 7 distinct bits", s)
		}
	}
}

// TestMitz32NegativeCombined covers the complement (not negation) of a
// negative combined hash.
func TestMitz32NegativeCombined(t *testing.T) {
	// a = -5, b = 0: every combined hash is -5, complemented to 4.
	assert.Equal(t, []int64{4}, raw.AppendIndexes(nil, strategy.Murmur128Mitz32, uint64(uint32(0xfffffffb)), 0, 1, 64))
	// a = MaxInt32, b = 1: a+1 wraps to MinInt32, complemented to MaxInt32.
	assert.Equal(t, []int64{0x7fffffff}, raw.AppendIndexes(nil, strategy.Murmur128Mitz32, 1<<32|0x7fffffff, 0, 1, 1<<40))
}

func toInt64(s []uint64) []int64 {
	r := make([]int64, len(s))
	for i, v := range s {
		r[i] = int64(v)
	}
	return r
}

// TestMightContainMatchesIndexes checks a filter's probe, which tests bits
// in pairs, against the bits AppendIndexes names, for odd and even k, on arrays
// from empty to full.
func TestMightContainMatchesIndexes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range []strategy.Strategy{strategy.Murmur128Mitz64, strategy.Murmur128Mitz32} {
		p := probe.For(s == strategy.Murmur128Mitz32, false)
		for k := 1; k <= 8; k++ {
			bits := bitarray.New(40)
			found := 0
			for step := range 400 {
				for range 16 {
					bits.Set(r.Uint64N(uint64(bits.BitSize())))
				}
				h1, h2 := r.Uint64(), r.Uint64()
				want := true
				for _, i := range raw.AppendIndexes(nil, s, h1, h2, k, bits.BitSize()) {
					want = want && bits.Get(uint64(i))
				}
				require.Equal(t, want, p.MightContain(h1, h2, k, bits), "%v k=%d step %d", s, k, step)
				if want {
					found++
				}
			}
			require.Less(t, 10, found, "%v k=%d: too few values found to test both answers", s, k)
			require.Less(t, found, 390, "%v k=%d: too few values absent to test both answers", s, k)
		}
	}
}
