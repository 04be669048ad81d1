package funnel_test

import (
	"encoding/hex"
	"math"
	"testing"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/sinkbuf"
	"github.com/stretchr/testify/assert"
)

// sinkBytes returns the bytes put feeds into a Sink.
func sinkBytes(put func(funnel.Sink)) string {
	var b sinkbuf.Buffer
	put(&b)
	return hex.EncodeToString(b.Bytes())
}

// TestSinkEncodings checks each Sink method against the bytes Guava's
// PrimitiveSink writes for the same call (docs/guava.md
// §6 and §7, from Guava 31.1 runs).
func TestSinkEncodings(t *testing.T) {
	tests := []struct {
		name string
		put  func(funnel.Sink)
		want string
	}{
		{"putByte", func(s funnel.Sink) { s.PutByte(0xfe) }, "fe"},
		{"putBytes", func(s funnel.Sink) { s.PutBytes([]byte{9, 9, 9}) }, "090909"},
		{"putBoolean(true)", func(s funnel.Sink) { s.PutBool(true) }, "01"},
		{"putBoolean(false)", func(s funnel.Sink) { s.PutBool(false) }, "00"},
		{"putShort(0x0102)", func(s funnel.Sink) { s.PutInt16(0x0102) }, "0201"},
		{"putShort(-2)", func(s funnel.Sink) { s.PutInt16(-2) }, "feff"},
		{"putChar('A')", func(s funnel.Sink) { s.PutChar('A') }, "4100"},
		{"putInt(7)", func(s funnel.Sink) { s.PutInt32(7) }, "07000000"},
		{"putInt(-1)", func(s funnel.Sink) { s.PutInt32(-1) }, "ffffffff"},
		{"putLong(8)", func(s funnel.Sink) { s.PutInt64(8) }, "0800000000000000"},
		{"putLong(MIN)", func(s funnel.Sink) { s.PutInt64(math.MinInt64) }, "0000000000000080"},
		{"putFloat(1.0f)", func(s funnel.Sink) { s.PutFloat32(1) }, "0000803f"},
		{"putDouble(1.0)", func(s funnel.Sink) { s.PutFloat64(1) }, "000000000000f03f"},
		{"putDouble(-0.0)", func(s funnel.Sink) { s.PutFloat64(math.Copysign(0, -1)) }, "0000000000000080"},
		{"putDouble(NaN payload)", func(s funnel.Sink) { s.PutFloat64(math.Float64frombits(0x7ff8000000000123)) }, "230100000000f87f"},
		{"putString(héllo, UTF_8)", func(s funnel.Sink) { s.PutString("héllo") }, "68c3a96c6c6f"},
		{"putString(U+1F600, UTF_8)", func(s funnel.Sink) { s.PutString("\U0001F600") }, "f09f9880"},
		{"putUnencodedChars(hello)", func(s funnel.Sink) { s.PutUnencodedChars("hello") }, "680065006c006c006f00"},
		{"putUnencodedChars(U+1F600)", func(s funnel.Sink) { s.PutUnencodedChars("\U0001F600") }, "3dd800de"},
		{"putUnencodedChars(中文)", func(s funnel.Sink) { s.PutUnencodedChars("中文") }, "2d4e8765"},
		{"putUnencodedChars(invalid UTF-8)", func(s funnel.Sink) { s.PutUnencodedChars("a\xffb") }, "6100fdff6200"},
		{"putUnencodedChars(empty)", func(s funnel.Sink) { s.PutUnencodedChars("") }, ""},
		// The hash depends only on the concatenation (docs/guava.md §6).
		{"putInt(7).putLong(8).putBytes(090909).putChar('x').putByte(5)", func(s funnel.Sink) {
			s.PutInt32(7)
			s.PutInt64(8)
			s.PutBytes([]byte{9, 9, 9})
			s.PutChar('x')
			s.PutByte(5)
		}, "070000000800000000000000090909780005"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, sinkBytes(tc.put))
		})
	}
}

func TestBuiltinFunnels(t *testing.T) {
	hexOf := func(b []byte) string { return hex.EncodeToString(b) }
	assert.Equal(t, "0102ff", hexOf(funnel.Append(nil, funnel.Bytes, []byte{1, 2, 0xff})))
	assert.Equal(t, "616263", hexOf(funnel.Append(nil, funnel.String, "abc")))
	assert.Equal(t, "610062006300", hexOf(funnel.Append(nil, funnel.UnencodedChars, "abc")))
	assert.Equal(t, "d2040000", hexOf(funnel.Append(nil, funnel.Int32, 1234)))
	assert.Equal(t, "d204000000000000", hexOf(funnel.Append(nil, funnel.Int64, 1234)))
	// sequentialFunnel(integerFunnel()) over [1,2,3] (docs/guava.md §6).
	assert.Equal(t, "010000000200000003000000", hexOf(funnel.Append(nil, funnel.Sequential(funnel.Int32), []int32{1, 2, 3})))
	assert.Empty(t, funnel.Append(nil, funnel.Sequential(funnel.Int64), nil))
	// Append appends.
	assert.Equal(t, "ff01", hexOf(funnel.Append([]byte{0xff}, funnel.Bytes, []byte{1})))
}

func TestBuffer(t *testing.T) {
	var b sinkbuf.Buffer
	assert.Zero(t, b.Len())
	b.PutInt32(1)
	b.PutString("xy")
	assert.Equal(t, 6, b.Len())
	b.Reset()
	assert.Zero(t, b.Len())
	b.PutByte(3)
	assert.Equal(t, []byte{3}, b.Bytes())
}

type point struct{ x, y int32 }

func (point) Funnel(p point, into funnel.Sink) {}

type holder struct{ f any }

func (holder) Funnel(v int64, into funnel.Sink) {}

func funnelA(v int64, into funnel.Sink) { into.PutInt64(v) }
func funnelB(v int64, into funnel.Sink) { into.PutInt64(v) }

func TestEqual(t *testing.T) {
	assert.True(t, funnel.Equal(funnel.String, funnel.String))
	assert.False(t, funnel.Equal(funnel.String, funnel.UnencodedChars))
	assert.False(t, funnel.Equal(nil, funnel.String))
	assert.True(t, funnel.Equal[string](nil, nil))

	assert.True(t, funnel.Equal(funnel.Sequential(funnel.Int64), funnel.Sequential(funnel.Int64)))
	assert.False(t, funnel.Equal(funnel.Sequential(funnel.Int64), funnel.Sequential[int64](funnel.Func[int64](funnelA))))

	a, b := funnel.Func[int64](funnelA), funnel.Func[int64](funnelB)
	assert.True(t, funnel.Equal[int64](a, funnel.Func[int64](funnelA)))
	assert.False(t, funnel.Equal[int64](a, b))
	assert.False(t, funnel.Equal[int64](a, funnel.Int64))
	assert.True(t, funnel.Equal(funnel.Sequential[int64](a), funnel.Sequential[int64](a)))

	assert.True(t, funnel.Equal[point](point{1, 2}, point{1, 2}))
	assert.False(t, funnel.Equal[point](point{1, 2}, point{1, 3}))
	// A comparable type holding something that is not: no panic, not equal.
	assert.False(t, funnel.Equal[int64](holder{funnelA}, holder{funnelA}))
	assert.True(t, funnel.Equal[int64](holder{1}, holder{1}))
}
