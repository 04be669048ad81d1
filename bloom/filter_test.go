package bloom_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
)

func TestPutMightContain(t *testing.T) {
	f := mustNew(t, funnel.String, 1000, 0.01)
	assert.False(t, f.MightContain("x"))
	assert.True(t, f.Put("x"), "the first put changes bits")
	assert.False(t, f.Put("x"), "the second does not")
	assert.True(t, f.MightContain("x"))
	// The empty string hashes to 0: every probe is bit 0 (docs/guava.md §2.2).
	assert.True(t, f.Put(""))
	assert.True(t, bitOf(t, f, 0))
}

func TestNewErrors(t *testing.T) {
	_, err := bloom.New[string](nil, 10, 0.01)
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, "funnel is nil")
	_, err = bloom.New(funnel.String, -5, 0.01)
	assert.EqualError(t, err, "bloom: invalid argument: expected insertions (-5) must be >= 0")
	_, err = bloom.New(funnel.String, 5, 1.5)
	assert.EqualError(t, err, "bloom: invalid argument: false positive probability (1.5) must be < 1.0")
}

// TestPutAllChecks runs Guava's putAll checks in Guava's order (docs/guava.md §4):
// each failing filter differs from f in the checked property and in every
// later one, so the order shows.
func TestPutAllChecks(t *testing.T) {
	f := mustNew(t, funnel.String, 100, 0.03)
	before := putAll(f, "a").Copy()

	err := f.PutAll(nil)
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	tests := []struct {
		other *bloom.Filter[string]
		want  string
	}{
		{f, "cannot combine a filter with itself"},
		{mustNew(t, funnel.UnencodedChars, 1, 0.5, bloom.WithStrategy(strategy.Murmur128Mitz32)), "filters must have the same number of hash functions (5 != 1)"},
		{mustNew(t, funnel.UnencodedChars, 10, 0.03, bloom.WithStrategy(strategy.Murmur128Mitz32)), "filters must have the same size underlying bit arrays (768 != 128)"},
		{mustNew(t, funnel.UnencodedChars, 100, 0.03, bloom.WithStrategy(strategy.Murmur128Mitz32)), "filters must have equal strategies (MURMUR128_MITZ_64 != MURMUR128_MITZ_32)"},
		{mustNew(t, funnel.UnencodedChars, 100, 0.03), "filters must have equal funnels (funnel.String != funnel.UnencodedChars)"},
	}
	for _, tc := range tests {
		if tc.other != f {
			tc.other.Put("b")
		}
		err := f.PutAll(tc.other)
		assert.ErrorIs(t, err, bloom.ErrIncompatible)
		assert.EqualError(t, err, "bloom: incompatible filters: "+tc.want)
		assert.False(t, f.IsCompatible(tc.other))
		assert.True(t, f.Equal(before), "a failed PutAll leaves f unchanged")
	}
	assert.False(t, f.IsCompatible(nil))

	other := putAll(mustNew(t, funnel.String, 100, 0.03), "b")
	assert.True(t, f.IsCompatible(other))
	require.NoError(t, f.PutAll(other))
	assert.True(t, f.MightContain("a"))
	assert.True(t, f.MightContain("b"))
}

func TestCopyEqual(t *testing.T) {
	f := putAll(mustNew(t, funnel.Int64, 1000, 0.01), 1, 2, 3)
	c := f.Copy()
	assert.True(t, f.Equal(c))
	assert.True(t, c.Equal(f))
	assert.True(t, f.Equal(f))
	assert.False(t, f.Equal(nil))
	assert.True(t, f.IsCompatible(c))

	c.Put(4)
	assert.False(t, f.Equal(c), "a copy shares no state")
	assert.False(t, f.MightContain(4) && !c.MightContain(4))

	// Same bits, other strategy, k or funnel: not equal.
	g := mustNew(t, funnel.Int64, 1000, 0.01, bloom.WithStrategy(strategy.Murmur128Mitz32))
	h := mustNew(t, funnel.Int64, 1000, 0.01)
	assert.False(t, g.Equal(h))
	seq := funnel.Func[int64](func(v int64, s funnel.Sink) { s.PutInt64(v) })
	assert.False(t, mustNew(t, seq, 1000, 0.01).Equal(h))
	assert.True(t, mustNew(t, seq, 1000, 0.01).Equal(mustNew(t, seq, 1000, 0.01)))
}

func TestString(t *testing.T) {
	f := mustNew(t, funnel.String, 1000, 0.01)
	assert.Equal(t, "bloom.Filter{funnel.String MURMUR128_MITZ_64 9600 bits, 7 hash functions}", f.String())
	named := mustNew(t, funnel.Named("users/v1", keyFunnel("users:")), 1000, 0.01)
	assert.Equal(t, "bloom.Filter{users/v1 MURMUR128_MITZ_64 9600 bits, 7 hash functions}", named.String())
	unnamed := mustNew(t, keyFunnel("users:"), 1000, 0.01)
	assert.Equal(t, "bloom.Filter{funnel.Func[string](bloom_test.keyFunnel.func1 at filter_test.go:"+keyFunnelLine+") MURMUR128_MITZ_64 9600 bits, 7 hash functions}", unnamed.String())
	top := mustNew(t, funnel.Func[string](putUpper), 1000, 0.01)
	assert.Equal(t, "bloom.Filter{funnel.Func[string](bloom_test.putUpper at filter_test.go:"+putUpperLine+") MURMUR128_MITZ_64 9600 bits, 7 hash functions}", top.String())
	assert.Equal(t, "bloom.Filter{bloom_test.prefixFunnel MURMUR128_MITZ_64 9600 bits, 7 hash functions}", mustNew(t, prefixFunnel{"a"}, 1000, 0.01).String())
}

// The lines where keyFunnel's closure and putUpper begin, as String and
// PutAll's errors report them, found in this file's text.
var keyFunnelLine, putUpperLine = sourceLine("\n\treturn func(v string, into funnel.Sink) {\n\t\tinto.PutString(prefix)"), sourceLine("\nfunc putUpper(")

// sourceLine returns the number of the line of filter_test.go that text,
// which begins with a newline, begins.
func sourceLine(text string) string {
	src, err := os.ReadFile("filter_test.go")
	if err != nil {
		panic(err)
	}
	i := strings.Index(string(src), text)
	if i < 0 {
		panic("filter_test.go lacks " + strconv.Quote(text))
	}
	return strconv.Itoa(1 + strings.Count(string(src[:i+1]), "\n"))
}

func putUpper(v string, into funnel.Sink) { into.PutString(strings.ToUpper(v)) }

// A prefixFunnel is a comparable funnel type without a String method.
type prefixFunnel struct{ prefix string }

func (p prefixFunnel) Funnel(v string, into funnel.Sink) { into.PutString(p.prefix + v) }

// keyFunnel is a funnel factory; it is not inlined, so that all its funnels
// share one code pointer.
//
//go:noinline
func keyFunnel(prefix string) funnel.Func[string] {
	return func(v string, into funnel.Sink) {
		into.PutString(prefix)
		into.PutString(v)
	}
}

// TestPutAllFuncFactory requires filters of funnels from one factory with
// different prefixes, which share their code, to be incompatible, and named
// ones to combine when their names are equal.
func TestPutAllFuncFactory(t *testing.T) {
	users, orders := mustNew(t, keyFunnel("users:"), 1000, 0.01), mustNew(t, keyFunnel("orders:"), 1000, 0.01)
	err := users.PutAll(orders)
	require.ErrorIs(t, err, bloom.ErrIncompatible)
	// One description for both, and the error says that they differ all
	// the same.
	assert.EqualError(t, err, "bloom: incompatible filters: filters must have equal funnels (funnel.Func[string](bloom_test.keyFunnel.func1 at filter_test.go:"+keyFunnelLine+") twice, but two different funnels; funnel.Named makes funnels equal by name)")
	// Funnels of two functions name both.
	err = users.PutAll(mustNew(t, funnel.Func[string](putUpper), 1000, 0.01))
	assert.EqualError(t, err, "bloom: incompatible filters: filters must have equal funnels (funnel.Func[string](bloom_test.keyFunnel.func1 at filter_test.go:"+keyFunnelLine+") != funnel.Func[string](bloom_test.putUpper at filter_test.go:"+putUpperLine+"))")
	err = mustNew(t, prefixFunnel{"a"}, 1000, 0.01).PutAll(mustNew(t, prefixFunnel{"b"}, 1000, 0.01))
	assert.EqualError(t, err, "bloom: incompatible filters: filters must have equal funnels (bloom_test.prefixFunnel twice, but two different funnels; funnel.Named makes funnels equal by name)")

	a := mustNew(t, funnel.Named("users/v1", keyFunnel("users:")), 1000, 0.01)
	b := putAll(mustNew(t, funnel.Named("users/v1", keyFunnel("users:")), 1000, 0.01), "alice")
	require.NoError(t, a.PutAll(b))
	assert.True(t, a.MightContain("alice"))
	c := mustNew(t, funnel.Named("orders/v1", keyFunnel("orders:")), 1000, 0.01)
	err = a.PutAll(c)
	require.ErrorIs(t, err, bloom.ErrIncompatible)
	assert.Contains(t, err.Error(), "(users/v1 != orders/v1)")
}

// bitOf reports whether bit i of f is set, as Guava's encoding of f says.
func bitOf[T any](t *testing.T, f *bloom.Filter[T], i int64) bool {
	t.Helper()
	data, err := f.MarshalBinary()
	require.NoError(t, err)
	return binary.BigEndian.Uint64(data[raw.HeaderSize+8*(i/64):])>>(i%64)&1 == 1
}

func TestBits(t *testing.T) {
	f := putAll(mustNew(t, funnel.String, 1000, 0.01), "hello")
	// Guava's MURMUR128_MITZ_64 indexes of "hello" at 9600 bits (docs/guava.md §2.2).
	for _, i := range []int64{898, 8731, 6964, 3405, 1638, 9471, 5912} {
		assert.True(t, bitOf(t, f, i), "bit %d", i)
	}
	assert.EqualValues(t, 7, f.BitCount())
}

func TestFunnel(t *testing.T) {
	f := mustNew(t, funnel.String, 100, 0.01)
	assert.True(t, funnel.Equal(funnel.String, raw.Funnel(f)))
	data, err := f.MarshalBinary()
	require.NoError(t, err)
	read, err := bloom.ReadFrom(bytes.NewReader(data), funnel.UnencodedChars)
	require.NoError(t, err)
	assert.True(t, funnel.Equal(funnel.UnencodedChars, raw.Funnel(read)), "ReadFrom's funnel, not the writer's")
}
