package raw_test

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/race"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// TestPutHash checks that PutHash and PutHashes leave the bits Put leaves
// and report what it reports, for both strategies, on a filter small enough
// for the caches and one large enough (9.6 MB) that PutHashes prefetches.
func TestPutHash(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.Murmur128Mitz64, strategy.Murmur128Mitz32} {
		for _, n := range []int64{1000, 8_000_000} {
			byValue := mustNew(t, funnel.String, n, 0.01, bloom.WithStrategy(s))
			byHash := mustNew(t, funnel.String, n, 0.01, bloom.WithStrategy(s))
			byBatch := mustNew(t, funnel.String, n, 0.01, bloom.WithStrategy(s))
			var hs []raw.Hash
			var want []bool
			for i := range 300 {
				v := strconv.Itoa(i % 250) // repeats, which change nothing
				h1, h2 := raw.Sum128(funnel.String, v)
				changed := byValue.Put(v)
				require.Equal(t, changed, raw.PutHash(byHash, h1, h2), "%v n=%d PutHash(%q)", s, n, v)
				hs, want = append(hs, raw.Hash{H1: h1, H2: h2}), append(want, changed)
			}
			got := raw.PutHashes(byBatch, []bool{true}, hs)
			assert.Equal(t, append([]bool{true}, want...), got, "%v n=%d PutHashes appends", s, n)
			assert.True(t, byValue.Equal(byHash), "%v n=%d PutHash", s, n)
			assert.True(t, byValue.Equal(byBatch), "%v n=%d PutHashes", s, n)
		}
	}
}

func TestPutHashAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes allocation counts meaningless; .ci/run also runs the tests without -race")
	}
	f := mustNew(t, funnel.String, 1000, 0.01)
	hs := make([]raw.Hash, 100)
	dst := make([]bool, 0, len(hs))
	assert.Zero(t, testing.AllocsPerRun(100, func() { raw.PutHash(f, 1, 2) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { dst = raw.PutHashes(f, dst[:0], hs) }))
}

// TestOrEncoded checks that OrEncoded of a filter's encoding, whole or in
// runs, and SetBit of each bit at its Redis offset, rebuild the filter.
func TestOrEncoded(t *testing.T) {
	src := mustNew(t, funnel.String, 1000, 0.01)
	for i := range 300 {
		src.Put(strconv.Itoa(i))
	}
	data, err := src.MarshalBinary()
	require.NoError(t, err)
	words := string(data[raw.HeaderSize:])

	whole := mustNew(t, funnel.String, 1000, 0.01)
	require.NoError(t, raw.OrEncoded(whole, 0, words))
	assert.True(t, src.Equal(whole), "OrEncoded of the whole encoding")

	runs := mustNew(t, funnel.String, 1000, 0.01)
	for off := 0; off < len(words); off += 24 {
		require.NoError(t, raw.OrEncoded(runs, int64(off), words[off:min(off+24, len(words))]))
	}
	assert.True(t, src.Equal(runs), "OrEncoded in runs of 3 words")
	require.NoError(t, raw.OrEncoded(runs, 0, words))
	assert.True(t, src.Equal(runs), "ORing the same bits again changes nothing")

	// A Redis bitmap of the same bytes: GETBIT counts from the most
	// significant bit of each byte.
	bits := mustNew(t, funnel.String, 1000, 0.01)
	for r := range int64(len(words) * 8) {
		if words[r/8]>>(7-r%8)&1 == 1 {
			assert.True(t, raw.SetBit(bits, r^63), "SetBit(%d) changes it", r^63)
			assert.False(t, raw.SetBit(bits, r^63), "SetBit(%d) again changes nothing", r^63)
		}
	}
	assert.True(t, src.Equal(bits), "SetBit of the Redis offsets")
	for _, i := range []int64{-1, bits.BitSize(), 1 << 62} {
		assert.False(t, raw.SetBit(bits, i), "SetBit(%d) outside the filter", i)
	}
	assert.True(t, src.Equal(bits), "SetBit outside the filter changes nothing")

	r := rand.New(rand.NewPCG(1, 2))
	junk := make([]byte, 16)
	for i := range junk {
		junk[i] = byte(r.Uint32() | 1)
	}
	size := int64(len(words))
	for _, c := range []struct {
		off int64
		b   string
	}{
		{-8, string(junk[:8])},
		{4, string(junk[:8])},
		{0, string(junk[:12])},
		{size - 8, string(junk)},
		{size + 8, ""},
		{1 << 62, string(junk[:8])},
	} {
		err := raw.OrEncoded(bits, c.off, c.b)
		assert.ErrorIs(t, err, bloom.ErrInvalidArgument, "%d bytes at %d", len(c.b), c.off)
	}
	assert.True(t, src.Equal(bits), "a refused OrEncoded changes nothing")
	require.NoError(t, raw.OrEncoded(bits, size, ""), "nothing at the end")
}

// TestCheckCompatible checks that CheckCompatible runs PutAll's checks on
// the parameters it is given, with PutAll's errors.
func TestCheckCompatible(t *testing.T) {
	f := mustNew(t, funnel.String, 1000, 0.01)
	other := mustNew(t, funnel.String, 1000, 0.01)
	assert.NoError(t, raw.CheckCompatible(f, other.NumHashFunctions(), other.BitSize(), raw.Strategy(other), raw.Funnel(other)))
	for _, c := range []struct {
		k    int
		bits int64
		s    strategy.Strategy
		f    funnel.Funnel[string]
		want string
	}{
		{8, f.BitSize(), raw.Strategy(f), funnel.String, "filters must have the same number of hash functions (7 != 8)"},
		{7, 64, raw.Strategy(f), funnel.String, "filters must have the same size underlying bit arrays (9600 != 64)"},
		{7, f.BitSize(), strategy.Murmur128Mitz32, funnel.String, "filters must have equal strategies (MURMUR128_MITZ_64 != MURMUR128_MITZ_32)"},
		{7, f.BitSize(), raw.Strategy(f), funnel.UnencodedChars, "filters must have equal funnels (funnel.String != funnel.UnencodedChars)"},
	} {
		err := raw.CheckCompatible(f, c.k, c.bits, c.s, c.f)
		assert.ErrorIs(t, err, bloom.ErrIncompatible)
		assert.ErrorContains(t, err, c.want)
	}
}

func mustNew[T any](t testing.TB, f funnel.Funnel[T], n int64, p float64, opts ...bloom.Option) *bloom.Filter[T] {
	t.Helper()
	filter, err := bloom.New(f, n, p, opts...)
	require.NoError(t, err)
	return filter
}

// TestFunnelStrategy checks the parameters raw tells of a filter.
func TestFunnelStrategy(t *testing.T) {
	named := funnel.Named("hosts/v1", funnel.String)
	f := mustNew(t, named, 1000, 0.01, bloom.WithStrategy(strategy.Murmur128Mitz32))
	assert.True(t, funnel.Equal(named, raw.Funnel(f)))
	assert.Equal(t, strategy.Murmur128Mitz32, raw.Strategy(f))
	var decoded *bloom.Filter[string]
	require.NoError(t, json.Unmarshal([]byte(`"AQcAAAAB`+"AAAAAAAAAAA="+`"`), &decoded))
	assert.Equal(t, funnel.String, raw.Funnel(decoded), "a filter decoded into nil takes its default funnel")
}
