package raw_test

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/golden"
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
func hashOf[T any](t *testing.T, f funnel.Funnel[T], value json.RawMessage, decode func(json.RawMessage) T) string {
	v := decode(value)
	h := hashHex(raw.Sum128(f, v))
	viaSink := funnel.Func[T](f.Funnel)
	if other := hashHex(raw.HasherFor(f).Sum128(v)); other != h {
		t.Errorf("%v: HasherFor gives %s, Sum128 %s", f, other, h)
	}
	if other := hashHex(raw.Sum128(viaSink, v)); other != h {
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
		{"empty", hashHex(raw.Sum128(funnel.String, "")), "00000000000000000000000000000000"},
		{"UTF8 a", hashHex(raw.Sum128(funnel.String, "a")), "897859f6655555855a890e51483ab5e6"},
		{"UTF8 hello", hashHex(raw.Sum128(funnel.String, "hello")), "029bbd41b3a7d8cb191dae486a901e5b"},
		{"UTF8 héllo", hashHex(raw.Sum128(funnel.String, "héllo")), "8a5c8572117b314e05bd7394dc339d41"},
		{"UTF8 quick brown fox", hashHex(raw.Sum128(funnel.String, "The quick brown fox jumps over the lazy dog")), "6c1b07bc7bbc4be347939ac4a93c437a"},
		{"15 bytes", hashHex(raw.Sum128(funnel.String, "0123456789abcde")), "5123bfc0f6d52da6f04c547c0cf5cc4f"},
		{"16 bytes", hashHex(raw.Sum128(funnel.String, "0123456789abcdef")), "a7d14acf946de04bda08a7635c5bc387"},
		{"17 bytes", hashHex(raw.Sum128(funnel.String, "0123456789abcdef0")), "75c0a58587ae24ebca283131b368fb73"},
		{"chars U+1F600", hashHex(raw.Sum128(funnel.UnencodedChars, "\U0001F600")), "6265408df5535bcdc9ef8fd788061b8b"},
		{"chars 中文", hashHex(raw.Sum128(funnel.UnencodedChars, "中文")), "80d622a712cf16adbe1a1482d311736c"},
		{"putInt(-1)", hashHex(raw.Sum128(funnel.Int32, -1)), "41466634eb45da436c8f8745485715c7"},
		{"putLong(1234)", hashHex(raw.Sum128(funnel.Int64, 1234)), "fb05732669ee19b181d8d685d3ee8185"},
		{"sequential [1,2,3]", hashHex(raw.Sum128(funnel.Sequential(funnel.Int32), []int32{1, 2, 3})), "b55c69c3c551cf504135d724a388b34d"},
		{"mixed sink", hashHex(raw.Sum128(funnel.Func[int](func(_ int, s funnel.Sink) {
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
	h1, h2 := raw.Sum128(funnel.String, "hello")
	assert.Equal(t, int64(-3758069500696749310), int64(h1))
	assert.Equal(t, int64(6565844092913065241), int64(h2))
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
		"Bytes":          func() { raw.Sum128(funnel.Bytes, b) },
		"String":         func() { raw.Sum128(funnel.String, s) },
		"UnencodedChars": func() { raw.Sum128(funnel.UnencodedChars, s) },
		"Int32":          func() { raw.Sum128(funnel.Int32, 42) },
		"Int64":          func() { raw.Sum128(funnel.Int64, 42) },
		"Sequential":     func() { raw.Sum128(seqFunnel, seq) },
		"Named":          func() { raw.Sum128(named, s) },
	} {
		assert.Zero(t, testing.AllocsPerRun(1000, fn), name)
	}
}
