package bloom

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom/internal/link"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/probe"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// TestWriteMode follows the write mode through the calls that make or
// remake a filter: a Builder writes plainly until it hands its filter over,
// and every filter that anything else makes is safe for concurrent writes.
func TestWriteMode(t *testing.T) {
	b, err := NewBuilder(funnel.Int64, 100, 0.01)
	require.NoError(t, err)
	wantPlain := probe.For(strategy.Murmur128Mitz64 == strategy.Murmur128Mitz32, true)
	wantAtomic := probe.For(strategy.Murmur128Mitz64 == strategy.Murmur128Mitz32, false)
	assert.Equal(t, wantPlain, b.f.probe)
	f := b.Filter()
	assert.Equal(t, wantAtomic, f.probe)
	assert.Equal(t, wantAtomic, b.f.probe, "the Builder's later puts")
	assert.Equal(t, wantAtomic, f.Copy().probe)

	data, err := f.MarshalBinary()
	require.NoError(t, err)
	var decoded Filter[int64]
	require.NoError(t, decoded.UnmarshalBinary(data))
	assert.Equal(t, wantAtomic, decoded.probe)
	read, err := ReadFrom(bytes.NewReader(data), funnel.Int64)
	require.NoError(t, err)
	assert.Equal(t, wantAtomic, read.probe)
}

// TestCoreLayout checks that a Filter begins with the fields of link.Core,
// at the same offsets and of the same types, so that package raw reads a
// Filter's core through a pointer to the Filter.
func TestCoreLayout(t *testing.T) {
	check := func(name string, f any, offsets [4]uintptr, size uintptr) {
		var c link.Core
		want := [4]uintptr{unsafe.Offsetof(c.Strategy), unsafe.Offsetof(c.Probe), unsafe.Offsetof(c.K), unsafe.Offsetof(c.Bits)}
		assert.Equal(t, want, offsets, "%s: the offsets of strategy, probe, k and bits", name)
		assert.GreaterOrEqual(t, size, unsafe.Sizeof(c), name)
		ft := reflect.TypeOf(f).Elem()
		ct := reflect.TypeFor[link.Core]()
		for i := range ct.NumField() {
			assert.Equal(t, ct.Field(i).Type, ft.Field(i).Type, "%s: field %d", name, i)
		}
	}
	var i Filter[int64]
	check("Filter[int64]", &i, [4]uintptr{unsafe.Offsetof(i.strategy), unsafe.Offsetof(i.probe), unsafe.Offsetof(i.k), unsafe.Offsetof(i.bits)}, unsafe.Sizeof(i))
	var s Filter[string]
	check("Filter[string]", &s, [4]uintptr{unsafe.Offsetof(s.strategy), unsafe.Offsetof(s.probe), unsafe.Offsetof(s.k), unsafe.Offsetof(s.bits)}, unsafe.Sizeof(s))

	f, err := New(funnel.String, 1000, 0.01, WithStrategy(strategy.Murmur128Mitz32))
	require.NoError(t, err)
	c := link.FilterCore(unsafe.Pointer(f))
	assert.Equal(t, f.strategy, c.Strategy)
	assert.Equal(t, f.probe, c.Probe)
	assert.Equal(t, f.k, c.K)
	assert.Same(t, f.bits, c.Bits)
}
