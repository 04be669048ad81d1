package funnel

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestScalarEncodings checks the bytes each scalar funnel feeds against
// those Guava's PrimitiveSink writes for its Java twin (docs/guava.md §6:
// putInt and putLong little-endian, putFloat and putDouble the raw bits).
func TestScalarEncodings(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"Int(1234) = putLong(1234)", Append(nil, Int, 1234), "d204000000000000"},
		{"Int(-1) = putLong(-1)", Append(nil, Int, -1), "ffffffffffffffff"},
		{"Int(MinInt32) = putLong(-2147483648)", Append(nil, Int, math.MinInt32), "00000080ffffffff"},
		{"Uint(0)", Append(nil, Uint, 0), "0000000000000000"},
		// On every platform: zero-extended, the long of the same value.
		{"Uint(MaxUint32)", Append(nil, Uint, math.MaxUint32), "ffffffff00000000"},
		{"Uint32(1234) = putInt(1234)", Append(nil, Uint32, 1234), "d2040000"},
		{"Uint32(MaxUint32) = putInt(-1)", Append(nil, Uint32, math.MaxUint32), "ffffffff"},
		{"Float32(1) = putFloat(1.0f)", Append(nil, Float32, 1), "0000803f"},
		{"Float32(-0) = putFloat(-0.0f)", Append(nil, Float32, float32(math.Copysign(0, -1))), "00000080"},
		{"Float32(Float.NaN)", Append(nil, Float32, math.Float32frombits(0x7fc00000)), "0000c07f"},
		{"Float32(NaN payload)", Append(nil, Float32, math.Float32frombits(0x7fc00123)), "2301c07f"},
		{"Float64(1) = putDouble(1.0)", Append(nil, Float64, 1), "000000000000f03f"},
		{"Float64(-0) = putDouble(-0.0)", Append(nil, Float64, math.Copysign(0, -1)), "0000000000000080"},
		{"Float64(Double.NaN)", Append(nil, Float64, math.Float64frombits(0x7ff8000000000000)), "000000000000f87f"},
		// Go's NaN is not Java's: its payload is 1.
		{"Float64(math.NaN())", Append(nil, Float64, math.NaN()), "010000000000f87f"},
		{"Float64(+Inf)", Append(nil, Float64, math.Inf(1)), "000000000000f07f"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, hex.EncodeToString(tc.got), tc.name)
	}
	// Int and Uint feed what Int64 and Uint64 feed for the same value.
	for _, v := range []int{0, 1, -1, math.MaxInt32, math.MinInt32, math.MaxInt, math.MinInt} {
		assert.Equal(t, Append(nil, Int64, int64(v)), Append(nil, Int, v), "Int(%d)", v)
	}
	for _, v := range []uint{0, 1, math.MaxUint32, math.MaxUint} {
		assert.Equal(t, Append(nil, Uint64, uint64(v)), Append(nil, Uint, v), "Uint(%d)", v)
	}
}

// TestScalarGuavaHashes checks the hashes of the scalar funnels against the
// ones Guava 31.1 computed for their Java twins (docs/guava.md §7), through
// the direct hash a filter uses.
func TestScalarGuavaHashes(t *testing.T) {
	hashHex := func(h1, h2 uint64) string {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:], h1)
		binary.LittleEndian.PutUint64(b[8:], h2)
		return hex.EncodeToString(b[:])
	}
	sum := func(h1, h2 uint64) [2]uint64 { return [2]uint64{h1, h2} }
	tests := []struct {
		name string
		h    [2]uint64
		want string
	}{
		{"putLong(1234) as Int", sum(intFunnel{}.Sum128(1234)), "fb05732669ee19b181d8d685d3ee8185"},
		{"putLong(-1) as Int", sum(intFunnel{}.Sum128(-1)), "73edba1a7ab2e4a0af464a6bc9122169"},
		{"putLong(1) as Uint", sum(uintFunnel{}.Sum128(1)), "4ac405fbb7034400069c6dd3b4cd8a3d"},
		{"putInt(-1) as Uint32", sum(uint32Funnel{}.Sum128(math.MaxUint32)), "41466634eb45da436c8f8745485715c7"},
		{"putInt(1234) as Uint32", sum(uint32Funnel{}.Sum128(1234)), "98391b7ec8ec1f06bb3f273592eb8d2f"},
		{"putFloat(1.0f)", sum(float32Funnel{}.Sum128(1)), "49cca2f91579b80172297d6a057feec4"},
		{"putDouble(1.0)", sum(float64Funnel{}.Sum128(1)), "12b097ba1df0c93b0bf19e5d34594766"},
		{"putDouble(-0.0)", sum(float64Funnel{}.Sum128(math.Copysign(0, -1))), "273259b4fe9d1501b6e04fecb0f8de8b"},
		{"putDouble(Double.NaN)", sum(float64Funnel{}.Sum128(math.Float64frombits(0x7ff8000000000000))), "3aa0a97e5a0cee366de2c35c0c377a9c"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, hashHex(tc.h[0], tc.h[1]), tc.name)
	}
}

// TestScalarNames checks the names the scalar funnels go by, which
// redisfilter records in a filter's config.
func TestScalarNames(t *testing.T) {
	for want, f := range map[string]fmt.Stringer{
		"funnel.Int": Int.(fmt.Stringer), "funnel.Uint": Uint.(fmt.Stringer), "funnel.Uint32": Uint32.(fmt.Stringer),
		"funnel.Float32": Float32.(fmt.Stringer), "funnel.Float64": Float64.(fmt.Stringer),
	} {
		assert.Equal(t, want, f.String())
	}
}
