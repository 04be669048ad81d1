package bloom_test

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/testkeys"
)

// interopScalarAndSliceCases are the filters of the funnels of Go's other
// scalar types and of slice funnels. A Java funnel name of the form
// "long@int" is the Java funnel "long" under a label of its own, for a Go
// funnel that shares its Java twin with another.
func interopScalarAndSliceCases(r *rand.Rand) []interopFilter {
	var cases []interopFilter
	cases = append(cases, newInteropCases(r, "long@int", funnel.Int, strconv.Itoa, valueGen[int]{
		fixed:  []int{0, 1, -1, 1234, math.MinInt, math.MaxInt, math.MinInt32, math.MaxInt32},
		random: func(r *rand.Rand) int { return int(randomInt64(r)) },
	})...)
	cases = append(cases, newInteropCases(r, "unsignedLong@uint", funnel.Uint, func(v uint) string { return strconv.FormatUint(uint64(v), 10) }, valueGen[uint]{
		fixed:  []uint{0, 1, math.MaxUint32, math.MaxUint},
		random: func(r *rand.Rand) uint { return uint(randomInt64(r)) },
	})...)
	cases = append(cases, newInteropCases(r, "unsignedInt", funnel.Uint32, func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }, valueGen[uint32]{
		fixed:  []uint32{0, 1, 1234, math.MaxInt32, 1 << 31, math.MaxUint32},
		random: func(r *rand.Rand) uint32 { return uint32(randomInt32(r)) },
	})...)
	cases = append(cases, newInteropCases(r, "float", funnel.Float32, func(v float32) string { return fmt.Sprintf("%08x", math.Float32bits(v)) }, valueGen[float32]{
		fixed: floatsOfBits(interopFloatBits),
		random: func(r *rand.Rand) float32 {
			if r.IntN(4) == 0 {
				return math.Float32frombits(interopFloatBits[r.IntN(len(interopFloatBits))])
			}
			return float32(r.NormFloat64() * 1e3)
		},
	})...)
	cases = append(cases, newInteropCases(r, "double", funnel.Float64, func(v float64) string { return fmt.Sprintf("%016x", math.Float64bits(v)) }, valueGen[float64]{
		fixed: append(doublesOfBits(interopDoubleBits), math.NaN(), 0.1, -1e300),
		random: func(r *rand.Rand) float64 {
			if r.IntN(4) == 0 {
				return math.Float64frombits(interopDoubleBits[r.IntN(len(interopDoubleBits))])
			}
			return r.NormFloat64() * 1e6
		},
	})...)

	words := func(r *rand.Rand) []string {
		v := make([]string, r.IntN(5))
		for i := range v {
			if r.IntN(2) == 0 {
				v[i] = []string{"", "a", "b", "ab", "c", "bc", "abc"}[r.IntN(7)]
			} else {
				v[i] = randomString(r)
			}
		}
		return v
	}
	cases = append(cases, newInteropCases(r, "sliceString", funnel.Slice(funnel.String), encodeStrings, valueGen[[]string]{
		fixed:  [][]string{nil, {""}, {"", ""}, {"ab", "c"}, {"a", "bc"}, {"abc"}, {"héllo", "\U0001F600"}},
		random: words,
	})...)
	cases = append(cases, newInteropCases(r, "sliceLong", funnel.Slice(funnel.Int64), func(v []int64) string {
		return strconv.Itoa(len(v)) + prefixEach(",", v, func(x int64) string { return strconv.FormatInt(x, 10) })
	}, valueGen[[]int64]{
		fixed: [][]int64{nil, {0}, {0, 0}, {1, 2, 3}, {math.MinInt64, math.MaxInt64}},
		random: func(r *rand.Rand) []int64 {
			v := make([]int64, r.IntN(5))
			for i := range v {
				v[i] = randomInt64(r)
			}
			return v
		},
	})...)
	cases = append(cases, newInteropCases(r, "sliceSliceString", funnel.Slice(funnel.Slice(funnel.String)), func(v [][]string) string {
		return strconv.Itoa(len(v)) + prefixEach("/", v, encodeStrings)
	}, valueGen[[][]string]{
		fixed: [][][]string{nil, {nil}, {nil, nil}, {{""}}, {{"ab", "c"}}, {{"ab"}, {"c"}}, {{"a"}, {"bc"}}},
		random: func(r *rand.Rand) [][]string {
			v := make([][]string, r.IntN(4))
			for i := range v {
				v[i] = words(r)
			}
			return v
		},
	})...)
	// Addresses of 4 and of 16 bytes; the zero Addr has no Java twin.
	cases = append(cases, newInteropCases(r, "sliceAddr", funnel.Slice(funnel.Addr), func(v []netip.Addr) string {
		return strconv.Itoa(len(v)) + prefixEach(",", v, encodeAddr)
	}, valueGen[[]netip.Addr]{
		fixed: [][]netip.Addr{nil, {netip.MustParseAddr("1.2.3.4")}, {netip.MustParseAddr("::ffff:1.2.3.4"), netip.MustParseAddr("::1")}},
		random: func(r *rand.Rand) []netip.Addr {
			v := make([]netip.Addr, r.IntN(4))
			for i := range v {
				v[i] = testkeys.Addr(r)
			}
			return v
		},
	})...)
	return cases
}

// encodeStrings encodes a list of strings for Interop.java: the count, then
// ",<hex of UTF-8>" for each.
func encodeStrings(v []string) string {
	return strconv.Itoa(len(v)) + prefixEach(",", v, func(s string) string { return hex.EncodeToString([]byte(s)) })
}

// prefixEach returns sep followed by encode(x) for each x of v.
func prefixEach[T any](sep string, v []T, encode func(T) string) string {
	var b strings.Builder
	for _, x := range v {
		b.WriteString(sep)
		b.WriteString(encode(x))
	}
	return b.String()
}

func floatsOfBits(bits []uint32) []float32 {
	out := make([]float32, len(bits))
	for i, b := range bits {
		out[i] = math.Float32frombits(b)
	}
	return out
}

func doublesOfBits(bits []uint64) []float64 {
	out := make([]float64, len(bits))
	for i, b := range bits {
		out[i] = math.Float64frombits(b)
	}
	return out
}
