package funnel_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/funnel"
)

func TestSliceEncoding(t *testing.T) {
	hexOf := func(b []byte) string { return hex.EncodeToString(b) }
	strs := funnel.Slice(funnel.String)
	// The count, then each element's length and bytes, ints little-endian.
	assert.Equal(t, "02000000"+"02000000"+"6162"+"01000000"+"63", hexOf(funnel.Append(nil, strs, []string{"ab", "c"})))
	assert.Equal(t, "02000000"+"01000000"+"61"+"02000000"+"6263", hexOf(funnel.Append(nil, strs, []string{"a", "bc"})))
	assert.Equal(t, "01000000"+"03000000"+"616263", hexOf(funnel.Append(nil, strs, []string{"abc"})))
	assert.Equal(t, "01000000"+"00000000", hexOf(funnel.Append(nil, strs, []string{""})))
	assert.Equal(t, "00000000", hexOf(funnel.Append(nil, strs, nil)))
	assert.Equal(t, "00000000", hexOf(funnel.Append(nil, strs, []string{})))
	// Fixed-size elements get their size too: into.putInt(8).putLong(x).
	assert.Equal(t, "01000000"+"08000000"+"0700000000000000", hexOf(funnel.Append(nil, funnel.Slice(funnel.Int64), []int64{7})))

	assert.Equal(t, "funnel.Slice(funnel.String)", fmt.Sprint(strs))
	assert.Equal(t, "funnel.Slice(funnel.Slice(funnel.Int64))", fmt.Sprint(funnel.Slice(funnel.Slice(funnel.Int64))))
}

// readSlice reads back a stream that Slice feeds from the start of b: the
// count, then that many lengths, each followed by its bytes. It returns
// the elements' bytes and the rest of b, with ok false if b does not start
// with such a stream.
func readSlice(b []byte) (elems [][]byte, rest []byte, ok bool) {
	readInt := func() (int, bool) {
		if len(b) < 4 {
			return 0, false
		}
		n := int(int32(binary.LittleEndian.Uint32(b)))
		b = b[4:]
		return n, n >= 0
	}
	count, ok := readInt()
	if !ok {
		return nil, nil, false
	}
	for range count {
		n, ok := readInt()
		if !ok || n > len(b) {
			return nil, nil, false
		}
		elems = append(elems, b[:n])
		b = b[n:]
	}
	return elems, b, true
}

// checkReadsBack requires readSlice to give back, from what Slice(f) feeds
// for v, exactly the bytes f feeds for each element of v, with nothing
// left over, and from that stream followed by another, the first stream's
// elements and then the other one. readSlice is a function of the bytes
// alone, so two slices that fed the same bytes would read back as the
// same elements: Slice(f) feeds the same bytes for two slices only when f
// feeds the same bytes for their elements one by one. And no stream is the
// start of another, or the other would read back with bytes left over.
func checkReadsBack[T any](t *testing.T, f funnel.Funnel[T], v []T, then []byte) {
	t.Helper()
	fed := funnel.Append(nil, funnel.Slice(f), v)
	var want [][]byte
	for _, e := range v {
		want = append(want, funnel.Append(nil, f, e))
	}
	elems, rest, ok := readSlice(append(fed, then...))
	require.True(t, ok, "%x does not read back", fed)
	require.Equal(t, len(want), len(elems), "%x: element count", fed)
	for i := range want {
		require.True(t, bytes.Equal(want[i], elems[i]), "%x: element %d is %x, fed %x", fed, i, elems[i], want[i])
	}
	require.Equal(t, then, rest, "%x: what follows the stream", fed)
}

// TestSliceReadsBack proves Slice injective for element funnels of every
// shape: of fixed size, of variable size, ones that feed nothing for some
// values or for all of them, and slices of slices.
func TestSliceReadsBack(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	word := func() string { return []string{"", "a", "b", "ab", "ba", "abc", "\x00", "\x01\x00\x00\x00"}[r.IntN(8)] }
	nothing := funnel.Func[string](func(string, funnel.Sink) {})
	sometimes := funnel.Func[string](func(s string, into funnel.Sink) {
		if len(s)%2 == 1 {
			into.PutString(s)
		}
	})
	next := func(n int) []byte { // another stream after this one
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	for range 2000 {
		strs := make([]string, r.IntN(6))
		for i := range strs {
			strs[i] = word()
		}
		nested := make([][]string, r.IntN(4))
		for i := range nested {
			nested[i] = strs[:r.IntN(len(strs)+1)]
		}
		ints := make([]int64, r.IntN(4))
		for i := range ints {
			ints[i] = int64(r.Uint64())
		}
		addrs := []netip.Addr{{}, netip.MustParseAddr("1.2.3.4"), netip.MustParseAddr("::1")}[:r.IntN(4)]
		then := next(r.IntN(9))
		checkReadsBack(t, funnel.String, strs, then)
		checkReadsBack(t, funnel.Bytes, [][]byte{[]byte(word()), nil, []byte(word())}[:r.IntN(4)], then)
		checkReadsBack(t, funnel.Sequential(funnel.String), nested, then)
		checkReadsBack(t, funnel.Slice(funnel.String), nested, then)
		checkReadsBack(t, nothing, strs, then)
		checkReadsBack(t, sometimes, strs, then)
		checkReadsBack(t, funnel.Int64, ints, then)
		checkReadsBack(t, funnel.Addr, addrs, then)
	}
}

// TestSliceKeepsApart checks, over every slice of up to three of a few
// short strings, that different slices feed different bytes, and that a
// count in front alone would not be enough: elements of variable length
// need their lengths too.
func TestSliceKeepsApart(t *testing.T) {
	words := []string{"", "a", "b", "ab", "ba", "aba"}
	var all [][]string
	var grow func(prefix []string)
	grow = func(prefix []string) {
		all = append(all, prefix)
		if len(prefix) == 3 {
			return
		}
		for _, w := range words {
			grow(append(prefix[:len(prefix):len(prefix)], w))
		}
	}
	grow(nil)

	countOnly := funnel.Func[[]string](func(v []string, into funnel.Sink) {
		into.PutInt32(int32(len(v)))
		for _, s := range v {
			into.PutString(s)
		}
	})
	seen := map[string][]string{}
	collisions := map[string]int{}
	for name, f := range map[string]funnel.Funnel[[]string]{
		"Slice":                    funnel.Slice(funnel.String),
		"a count, then Sequential": countOnly,
		"Sequential":               funnel.Sequential(funnel.String),
	} {
		clear(seen)
		for _, v := range all {
			key := string(funnel.Append(nil, f, v))
			if other, ok := seen[key]; ok {
				collisions[name]++
				if name == "Slice" {
					t.Errorf("Slice feeds %x for both %q and %q", key, other, v)
				}
			}
			seen[key] = v
		}
	}
	assert.Zero(t, collisions["Slice"], "of %d slices", len(all))
	assert.Positive(t, collisions["a count, then Sequential"], "a count alone keeps slices of variable-length elements apart?")
	assert.Positive(t, collisions["Sequential"])
	t.Logf("%d slices; collisions: %v", len(all), collisions)
}

func TestSliceEqual(t *testing.T) {
	assert.True(t, funnel.Equal(funnel.Slice(funnel.String), funnel.Slice(funnel.String)))
	assert.False(t, funnel.Equal(funnel.Slice(funnel.String), funnel.Slice(funnel.UnencodedChars)))
	assert.False(t, funnel.Equal(funnel.Slice(funnel.String), funnel.Sequential(funnel.String)))
	assert.True(t, funnel.Equal(funnel.Slice(funnel.Named("host/v1", funnel.String)), funnel.Slice(funnel.Named("host/v1", funnel.UnencodedChars))))
	assert.False(t, funnel.Equal(funnel.Named("a", funnel.Slice(funnel.String)), funnel.Slice(funnel.String)))
}
