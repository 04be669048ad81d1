package bloom_test

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
)

var (
	_ io.WriterTo                = (*bloom.Filter[string])(nil)
	_ encoding.BinaryMarshaler   = (*bloom.Filter[string])(nil)
	_ encoding.BinaryUnmarshaler = (*bloom.Filter[string])(nil)
	_ fmt.Stringer               = (*bloom.Filter[string])(nil)
)

func mustNew[T any](t testing.TB, f funnel.Funnel[T], n int64, p float64, opts ...bloom.Option) *bloom.Filter[T] {
	t.Helper()
	filter, err := bloom.New(f, n, p, opts...)
	require.NoError(t, err)
	return filter
}

func putAll[T any](f *bloom.Filter[T], vs ...T) *bloom.Filter[T] {
	for _, v := range vs {
		f.Put(v)
	}
	return f
}

func TestSpecVectors(t *testing.T) {
	legacy := bloom.WithLegacyHashCount()
	check := func(t *testing.T, name string, bitSize int64, k int, bitCount int64, fpp float64, count int64, wantHex string, f interface {
		BitSize() int64
		NumHashFunctions() int
		BitCount() int64
		ExpectedFPP() float64
		ApproximateElementCount() int64
		MarshalBinary() ([]byte, error)
	}) {
		assert.Equal(t, bitSize, f.BitSize(), name)
		assert.Equal(t, k, f.NumHashFunctions(), name)
		assert.Equal(t, bitCount, f.BitCount(), name)
		assert.Equal(t, fpp, f.ExpectedFPP(), name)
		assert.Equal(t, count, f.ApproximateElementCount(), name)
		data, err := f.MarshalBinary()
		require.NoError(t, err)
		assert.Equal(t, wantHex, hex.EncodeToString(data), name)
	}
	ints := make([]int64, 10)
	for i := range ints {
		ints[i] = int64(i)
	}
	var be [][]byte
	for i := range 100 {
		be = append(be, binary.BigEndian.AppendUint32(nil, uint32(i)))
	}
	check(t, "S1", 128, 5, 14, 1.5652738511562347e-5, 3, "010500000002a0080280008402000002400800800801",
		putAll(mustNew(t, funnel.String, 10, 0.03, legacy), "a", "b", "c"))
	check(t, "S2", 64, 7, 15, 3.884892407768348e-5, 2, "01070000000148380809c8000e08",
		putAll(mustNew(t, funnel.Int32, 5, 0.01, legacy), 1, 2, 3))
	check(t, "S3", 768, 5, 50, 1.1696176720330872e-6, 10, "01050000000c000200000000004002080004104800004004000000804000000400000100000200400400028000000003800020002480040281000000000000002000000000001000001028081082000000243001002000040000000000000000084000000802",
		putAll(mustNew(t, funnel.Int64, 100, 0.03, legacy), ints...))
	check(t, "S4", 768, 5, 375, 0.027755575615628914, 103, "01050000000c38cbeddaae2a0c3fe85a6de84821fea98a61616307b8b8db3ecf808d9cd0e12ea3140d337d7b4aab625856c9f8cee982b53909c1cc40f3289e4dc41808a8391cae282e1a56dae495754bf7e2cc7c1455a089fcb4efa55511b8accac0f366acc7",
		putAll(mustNew(t, funnel.Bytes, 100, 0.03, legacy), be...))
	check(t, "S5", 768, 5, 10, 3.7427765505058785e-10, 2, "01050000000c000000000000000000004000000004000000000000000000000000000008000000000000000000000000000012800000000000000000000000000020000000000000000000000000000000000000000000000000000000000000000005400000",
		putAll(mustNew(t, funnel.UnencodedChars, 100, 0.03, legacy), "1", "2"))
	check(t, "S6", 192, 5, 13, 1.4230187353773859e-6, 3, "000500000003811100400000000004000100001040000020001010000004",
		putAll(mustNew(t, funnel.UnencodedChars, 20, 0.03, legacy, bloom.WithStrategy(strategy.Murmur128Mitz32)), "x", "y", "z"))
	check(t, "S7", 64, 1, 0, 0, 0, "0101000000010000000000000000",
		mustNew(t, funnel.String, 0, 0.5, legacy))
	check(t, "S8", 64, 6, 6, 6.789341568946838e-7, 1, "0106000000018010004008002004",
		putAll(mustNew(t, funnel.String, 1, 0.01, legacy), "hello"))
	// Current Guava's k for the same sizing, and this package's default.
	check(t, "S8-HEAD", 64, 7, 7, 1.8725199879554566e-7, 1, "0107000000018010004009002004",
		putAll(mustNew(t, funnel.String, 1, 0.01), "hello"))
}

// TestReadFromGuavaCases reads the streams of docs/guava.md §5.2 (R1–R15), whose
// outcome on Guava 31.1 is known: accepted, or rejected and why.
func TestReadFromGuavaCases(t *testing.T) {
	ok := func(ordinal, k int, bitSize int64) func(*testing.T, *bloom.Filter[string], error) {
		return func(t *testing.T, f *bloom.Filter[string], err error) {
			require.NoError(t, err)
			assert.Equal(t, ordinal, raw.Strategy(f).Ordinal())
			assert.Equal(t, k, f.NumHashFunctions())
			assert.Equal(t, bitSize, f.BitSize())
		}
	}
	fails := func(want string, targets ...error) func(*testing.T, *bloom.Filter[string], error) {
		return func(t *testing.T, f *bloom.Filter[string], err error) {
			assert.Nil(t, f)
			assert.ErrorContains(t, err, want)
			for _, target := range targets {
				assert.ErrorIs(t, err, target)
			}
		}
	}
	truncated := func(t *testing.T, f *bloom.Filter[string], err error) {
		assert.Nil(t, f)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.ErrorIs(t, err, bloom.ErrCorrupt)
	}
	tests := []struct {
		name  string
		hex   string
		check func(*testing.T, *bloom.Filter[string], error)
	}{
		{"R1 empty", "", func(t *testing.T, f *bloom.Filter[string], err error) {
			assert.Nil(t, f)
			assert.Equal(t, io.EOF, err, "an empty stream is io.EOF, as in encoding/binary")
		}},
		{"R2 one byte", "01", truncated},
		{"R3 header only", "010500000001", truncated},
		{"R4 ok", "0105000000010000000000000003", ok(1, 5, 64)},
		{"R5 trailing bytes", "01050000000100000000000000030909", ok(1, 5, 64)},
		{"R6 ordinal 2", "0205000000010000000000000003", fails("strategy: unknown ordinal 2", bloom.ErrCorrupt, strategy.ErrUnknownOrdinal)},
		{"R7 ordinal -1", "ff05000000010000000000000003", fails("strategyOrdinal: -1 numHashFunctions: 5 dataLength: 1", bloom.ErrCorrupt)},
		{"R8 MITZ_32", "0005000000010000000000000003", ok(0, 5, 64)},
		{"R9 k=0", "0100000000010000000000000003", fails("number of hash functions (0) must be > 0", bloom.ErrCorrupt)},
		{"R10 k=255", "01ff000000010000000000000003", ok(1, 255, 64)},
		{"R11 no words", "010500000000", fails("word count 0 must be > 0", bloom.ErrCorrupt)},
		{"R12 -1 words", "0105ffffffff", fails("word count -1 must be > 0", bloom.ErrCorrupt)},
		{"R13 2 words, 1 present", "0105000000020000000000000003", truncated},
		{"R14 ordinal 7, k 0, no words", "070000000000", fails("strategyOrdinal: 7 numHashFunctions: 0 dataLength: 0", bloom.ErrCorrupt)},
		{"R15 min int words", "010580000000", fails("word count -2147483648 must be > 0", bloom.ErrCorrupt)},
		{"k=0 and truncated: Guava reads the data first", "010000000002", truncated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := hex.DecodeString(tc.hex)
			require.NoError(t, err)
			f, err := bloom.ReadFrom(bytes.NewReader(data), funnel.String)
			tc.check(t, f, err)
			// The same outcome through a reader that returns one byte at a time.
			f, err = bloom.ReadFrom(iotest.OneByteReader(bytes.NewReader(data)), funnel.String)
			tc.check(t, f, err)
		})
	}
}

// TestReadFromStopsAtFilter checks that ReadFrom reads exactly one filter
// and leaves what follows in the reader.
func TestReadFromStopsAtFilter(t *testing.T) {
	a := putAll(mustNew(t, funnel.String, 1000, 0.01), "a", "b")
	b := putAll(mustNew(t, funnel.String, 10, 0.5, bloom.WithStrategy(strategy.Murmur128Mitz32)), "c")
	var buf bytes.Buffer
	_, err := a.WriteTo(&buf)
	require.NoError(t, err)
	_, err = b.WriteTo(&buf)
	require.NoError(t, err)
	buf.WriteString("12345678")

	r := iotest.HalfReader(&buf)
	gotA, err := bloom.ReadFrom(r, funnel.String)
	require.NoError(t, err)
	gotB, err := bloom.ReadFrom(r, funnel.String)
	require.NoError(t, err)
	assert.True(t, gotA.Equal(a))
	assert.True(t, gotB.Equal(b))
	rest, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, "12345678", string(rest))
}

// TestReadFromHostileHeader feeds six bytes that announce the largest filter
// this platform holds (2³¹−1 words, 16 GiB, on a 64-bit one): ReadFrom fails
// at once without allocating anything like that.
func TestReadFromHostileHeader(t *testing.T) {
	words := min(math.MaxInt32, math.MaxInt/8) // the int that counts its bytes
	header := binary.BigEndian.AppendUint32([]byte{1, 5}, uint32(words))
	for _, data := range [][]byte{
		header,
		append(header, make([]byte, 100000)...),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f, err := bloom.ReadFrom(bytes.NewReader(data), funnel.String)
		runtime.ReadMemStats(&after)
		assert.Nil(t, f)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.ErrorContains(t, err, fmt.Sprintf("stream ends after %d of %d bytes", len(data), 6+8*words))
		allocated := after.TotalAlloc - before.TotalAlloc
		assert.Less(t, allocated, uint64(4*len(data)+1<<20), "allocated %d bytes for a %d-byte stream", allocated, len(data))
	}
}

func TestReadFromLimit(t *testing.T) {
	f := putAll(mustNew(t, funnel.Int64, 1000, 0.01), 1, 2, 3)
	data, err := f.MarshalBinary()
	require.NoError(t, err)

	got, err := bloom.ReadFromLimit(bytes.NewReader(data), funnel.Int64, f.BitSize())
	require.NoError(t, err)
	assert.True(t, got.Equal(f))

	r := bytes.NewReader(data)
	got, err = bloom.ReadFromLimit(r, funnel.Int64, f.BitSize()-1)
	assert.Nil(t, got)
	assert.ErrorIs(t, err, bloom.ErrTooLarge)
	assert.ErrorContains(t, err, "9600 bits is more than the limit of 9599")
	assert.Equal(t, len(data)-6, r.Len(), "only the header was read")

	_, err = bloom.ReadFromLimit(bytes.NewReader(data), funnel.Int64, -1)
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	_, err = bloom.ReadFrom[int64](bytes.NewReader(data), nil)
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.after {
		n := w.after
		w.after = 0
		return n, errors.New("disk full")
	}
	w.after -= len(p)
	return len(p), nil
}

func TestIOErrors(t *testing.T) {
	boom := errors.New("connection reset")
	_, err := bloom.ReadFrom(failingReader{boom}, funnel.String)
	assert.ErrorIs(t, err, boom)
	assert.NotErrorIs(t, err, bloom.ErrCorrupt)

	f := mustNew(t, funnel.String, 1e6, 0.01) // 1.2 MB: several chunks
	w := &failingWriter{after: 100000}
	n, err := f.WriteTo(w)
	assert.EqualError(t, err, "disk full")
	assert.EqualValues(t, 100000, n)
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64} {
		f := mustNew(t, funnel.Int64, 100000, 0.001, bloom.WithStrategy(s))
		for i := range int64(5000) {
			f.Put(i * 7)
		}
		data, err := f.MarshalBinary()
		require.NoError(t, err)
		var buf bytes.Buffer
		n, err := f.WriteTo(&buf)
		require.NoError(t, err)
		assert.EqualValues(t, len(data), n)
		assert.Equal(t, data, buf.Bytes(), "MarshalBinary returns what WriteTo writes")
		assert.EqualValues(t, 6+f.BitSize()/8, n)

		// UnmarshalBinary replaces a filter of any shape, keeping its funnel.
		g := mustNew(t, funnel.Int64, 10, 0.5)
		require.NoError(t, g.UnmarshalBinary(data))
		assert.True(t, g.Equal(f))
		assert.Equal(t, s, raw.Strategy(g))
		for i := range int64(5000) {
			assert.True(t, g.MightContain(i*7))
		}
	}
}

func TestUnmarshalBinaryErrors(t *testing.T) {
	f := putAll(mustNew(t, funnel.String, 10, 0.1), "keep")
	before := f.Copy()
	err := f.UnmarshalBinary([]byte{1, 5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 9})
	assert.ErrorIs(t, err, bloom.ErrCorrupt)
	assert.ErrorContains(t, err, "1 bytes after the 14-byte filter")
	err = f.UnmarshalBinary([]byte{1, 5, 0, 0, 0, 2})
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	err = f.UnmarshalBinary(nil)
	assert.ErrorIs(t, err, io.EOF)
	assert.True(t, f.Equal(before), "a failed UnmarshalBinary leaves the filter unchanged")

	// A zero Filter takes its element type's default funnel, if it has one.
	var zero bloom.Filter[string]
	require.NoError(t, zero.UnmarshalBinary([]byte{1, 5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3}))
	assert.Equal(t, funnel.String, raw.Funnel(&zero))
	var noDefault bloom.Filter[visit]
	err = noDefault.UnmarshalBinary([]byte{1, 5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3})
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, "decoding into a zero Filter[bloom_test.visit]")
}

// visit is a key type with no built-in funnel, and so no default funnel.
type visit struct{ host string }

func TestSaturated(t *testing.T) {
	// docs/guava.md §8.3: a 64-bit filter is full after 384 puts of 0..383.
	f := mustNew(t, funnel.Int32, 1, 0.5)
	for i := range int32(384) {
		f.Put(i)
	}
	assert.EqualValues(t, 64, f.BitCount())
	assert.Equal(t, 1.0, f.ExpectedFPP())
	assert.True(t, f.MightContain(-12345))
	assert.Equal(t, int64(math.MaxInt64), f.ApproximateElementCount(), "Guava throws; this reports the count as unbounded")
}
