package strategy

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/internal/golden"
	"github.com/mitzbloom/mitzbloom/internal/probe"
	"github.com/mitzbloom/mitzbloom/internal/race"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hashHex formats (h1, h2) as Guava's HashCode.toString: little-endian h1,
// then little-endian h2.
func hashHex(h1, h2 uint64) string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], h1)
	binary.LittleEndian.PutUint64(b[8:], h2)
	return hex.EncodeToString(b[:])
}

// hashOf hashes a golden value every way a filter can: Sum128, HasherFor, and
// through a Sink (funnel.Func has no direct hash), and fails if they differ.
func hashOf[T any](t *testing.T, f funnel.Funnel[T], raw json.RawMessage, decode func(json.RawMessage) T) string {
	v := decode(raw)
	h := hashHex(Sum128(f, v))
	viaSink := funnel.Func[T](f.Funnel)
	if other := hashHex(HasherFor(f).Sum128(v)); other != h {
		t.Errorf("%v: HasherFor gives %s, Sum128 %s", f, other, h)
	}
	if other := hashHex(Sum128(viaSink, v)); other != h {
		t.Errorf("%v: hashing through a Sink gives %s, Sum128 %s", f, other, h)
	}
	return h
}

// TestSum128Golden checks every hash that Guava 31.1 computed for the golden
// vectors, for each built-in funnel and the custom record funnel.
func TestSum128Golden(t *testing.T) {
	v, err := golden.Load()
	require.NoError(t, err)
	for i, h := range v.Hashes {
		var got string
		switch h.Funnel {
		case "bytes":
			got = hashOf(t, funnel.Bytes, h.Value, golden.DecodeBytes)
		case "string":
			got = hashOf(t, funnel.String, h.Value, golden.Decode[string])
		case "unencodedChars":
			got = hashOf(t, funnel.UnencodedChars, h.Value, golden.Decode[string])
		case "int32":
			got = hashOf(t, funnel.Int32, h.Value, golden.Decode[int32])
		case "int64":
			got = hashOf(t, funnel.Int64, h.Value, golden.Decode[int64])
		case "sequentialInt64":
			got = hashOf(t, funnel.Sequential(funnel.Int64), h.Value, golden.Decode[[]int64])
		case "record":
			got = hashOf(t, golden.RecordFunnel, h.Value, golden.Decode[golden.Record])
		default:
			t.Fatalf("hash %d: unknown funnel %q", i, h.Funnel)
		}
		assert.Equal(t, h.Murmur3128, got, "hash %d: %s %s", i, h.Funnel, h.Value)
	}
}

// TestSum128Reference checks the hash vectors of the Guava reference
// (docs/guava.md §6 and §7).
func TestSum128Reference(t *testing.T) {
	tests := []struct {
		name string
		h    string
		want string
	}{
		{"empty", hashHex(Sum128(funnel.String, "")), "00000000000000000000000000000000"},
		{"UTF8 a", hashHex(Sum128(funnel.String, "a")), "897859f6655555855a890e51483ab5e6"},
		{"UTF8 hello", hashHex(Sum128(funnel.String, "hello")), "029bbd41b3a7d8cb191dae486a901e5b"},
		{"UTF8 héllo", hashHex(Sum128(funnel.String, "héllo")), "8a5c8572117b314e05bd7394dc339d41"},
		{"UTF8 quick brown fox", hashHex(Sum128(funnel.String, "The quick brown fox jumps over the lazy dog")), "6c1b07bc7bbc4be347939ac4a93c437a"},
		{"15 bytes", hashHex(Sum128(funnel.String, "0123456789abcde")), "5123bfc0f6d52da6f04c547c0cf5cc4f"},
		{"16 bytes", hashHex(Sum128(funnel.String, "0123456789abcdef")), "a7d14acf946de04bda08a7635c5bc387"},
		{"17 bytes", hashHex(Sum128(funnel.String, "0123456789abcdef0")), "75c0a58587ae24ebca283131b368fb73"},
		{"chars U+1F600", hashHex(Sum128(funnel.UnencodedChars, "\U0001F600")), "6265408df5535bcdc9ef8fd788061b8b"},
		{"chars 中文", hashHex(Sum128(funnel.UnencodedChars, "中文")), "80d622a712cf16adbe1a1482d311736c"},
		{"putInt(-1)", hashHex(Sum128(funnel.Int32, -1)), "41466634eb45da436c8f8745485715c7"},
		{"putLong(1234)", hashHex(Sum128(funnel.Int64, 1234)), "fb05732669ee19b181d8d685d3ee8185"},
		{"sequential [1,2,3]", hashHex(Sum128(funnel.Sequential(funnel.Int32), []int32{1, 2, 3})), "b55c69c3c551cf504135d724a388b34d"},
		{"mixed sink", hashHex(Sum128(funnel.Func[int](func(_ int, s funnel.Sink) {
			s.PutInt32(7)
			s.PutInt64(8)
			s.PutBytes([]byte{9, 9, 9})
			s.PutChar('x')
			s.PutByte(5)
		}), 0)), "64c134e164577b23a6c78c8436d124bc"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.h, tc.name)
	}
	h1, h2 := Sum128(funnel.String, "hello")
	assert.Equal(t, int64(-3758069500696749310), int64(h1))
	assert.Equal(t, int64(6565844092913065241), int64(h2))
}

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
		h1, h2 := Sum128(funnel.String, tc.value)
		require.Equal(t, tc.h1, int64(h1))
		require.Equal(t, tc.h2, int64(h2))

		got64 := Murmur128Mitz64.AppendIndexes(nil, h1, h2, 7, int64(tc.indexBitSize))
		got32 := Murmur128Mitz32.AppendIndexes([]int64{}, h1, h2, 7, int64(tc.indexBitSize))
		assert.Equal(t, toInt64(tc.mitz64), got64, "MURMUR128_MITZ_64 %q", tc.value)
		assert.Equal(t, toInt64(tc.mitz32), got32, "MURMUR128_MITZ_32 %q", tc.value)

		// Put sets exactly those bits, and MightContain sees them.
		for _, s := range []Strategy{Murmur128Mitz64, Murmur128Mitz32} {
			bits := bitarray.New(150)
			p := probe.For(s == Murmur128Mitz32, false)
			assert.False(t, p.MightContain(h1, h2, 7, bits))
			assert.True(t, p.Put(h1, h2, 7, bits))
			assert.False(t, p.Put(h1, h2, 7, bits), "second put changes nothing")
			assert.True(t, p.MightContain(h1, h2, 7, bits))
			want := tc.mitz64
			if s == Murmur128Mitz32 {
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
	assert.Equal(t, []int64{4}, Murmur128Mitz32.AppendIndexes(nil, uint64(uint32(0xfffffffb)), 0, 1, 64))
	// a = MaxInt32, b = 1: a+1 wraps to MinInt32, complemented to MaxInt32.
	assert.Equal(t, []int64{0x7fffffff}, Murmur128Mitz32.AppendIndexes(nil, 1<<32|0x7fffffff, 0, 1, 1<<40))
}

func TestByOrdinal(t *testing.T) {
	s, err := ByOrdinal(0)
	require.NoError(t, err)
	assert.Equal(t, Murmur128Mitz32, s)
	s, err = ByOrdinal(1)
	require.NoError(t, err)
	assert.Equal(t, Murmur128Mitz64, s)
	for _, o := range []int{-1, 2, 7, 128} {
		_, err := ByOrdinal(o)
		assert.True(t, errors.Is(err, ErrUnknownOrdinal), "ordinal %d: %v", o, err)
	}
	assert.Equal(t, "MURMUR128_MITZ_32", Murmur128Mitz32.String())
	assert.Equal(t, "MURMUR128_MITZ_64", Murmur128Mitz64.String())
	assert.Equal(t, 0, Murmur128Mitz32.Ordinal())
	assert.Equal(t, 1, Murmur128Mitz64.Ordinal())
}

func TestSum128Allocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop items at random, so allocation counts mean nothing; .ci/run also runs the tests without -race")
	}
	s := "a string of some length"
	b := []byte(s)
	seq := []int64{1, 2, 3}
	seqFunnel := funnel.Sequential(funnel.Int64)
	named := funnel.Named("utf8", funnel.String)
	for name, fn := range map[string]func(){
		"Bytes":          func() { Sum128(funnel.Bytes, b) },
		"String":         func() { Sum128(funnel.String, s) },
		"UnencodedChars": func() { Sum128(funnel.UnencodedChars, s) },
		"Int32":          func() { Sum128(funnel.Int32, 42) },
		"Int64":          func() { Sum128(funnel.Int64, 42) },
		"Sequential":     func() { Sum128(seqFunnel, seq) },
		"Named":          func() { Sum128(named, s) },
	} {
		assert.Zero(t, testing.AllocsPerRun(1000, fn), name)
	}
}

func toInt64(s []uint64) []int64 {
	r := make([]int64, len(s))
	for i, v := range s {
		r[i] = int64(v)
	}
	return r
}

// TestMightContainMatchesIndexes checks MightContain, which tests bits in
// pairs, against the bits AppendIndexes names, for odd and even k, on arrays
// from empty to full.
func TestMightContainMatchesIndexes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range []Strategy{Murmur128Mitz64, Murmur128Mitz32} {
		p := probe.For(s == Murmur128Mitz32, false)
		for k := 1; k <= 8; k++ {
			bits := bitarray.New(40)
			found := 0
			for step := range 400 {
				for range 16 {
					bits.Set(r.Uint64N(uint64(bits.BitSize())))
				}
				h1, h2 := r.Uint64(), r.Uint64()
				want := true
				for _, i := range s.AppendIndexes(nil, h1, h2, k, bits.BitSize()) {
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
		h1, h2 = HasherFor(f).Sum128("hello")
		assert.Equal(t, [2]uint64{want1, want2}, [2]uint64{h1, h2}, "HasherFor %s", name)
	}
	_, builtin := HasherFor(funnel.Named("utf8", funnel.String)).(buffered[string])
	assert.False(t, builtin, "a named built-in funnel keeps the fast path")
	_, buf := HasherFor[string](impostor{}).(buffered[string])
	assert.True(t, buf, "an impostor is hashed through a buffer")
}
