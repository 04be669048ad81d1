package bloom

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
