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

// TestWriteModeKept follows the write mode through the calls that make or
// remake a filter: New and Copy keep the one asked for, UnmarshalBinary keeps
// the receiver's, and ReadFrom, which takes no options, makes filters safe
// for concurrent writes.
func TestWriteModeKept(t *testing.T) {
	plain, err := New(funnel.Int64, 100, 0.01, WithUnsynchronizedWrites())
	require.NoError(t, err)
	atomic, err := New(funnel.Int64, 100, 0.01)
	require.NoError(t, err)
	wantPlain := probe.For(strategy.Murmur128Mitz64 == strategy.Murmur128Mitz32, true)
	wantAtomic := probe.For(strategy.Murmur128Mitz64 == strategy.Murmur128Mitz32, false)
	assert.Equal(t, wantPlain, plain.probe)
	assert.Equal(t, wantAtomic, atomic.probe)
	assert.Equal(t, wantPlain, plain.Copy().probe)
	assert.Equal(t, wantAtomic, atomic.Copy().probe)

	data, err := atomic.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, plain.UnmarshalBinary(data))
	assert.Equal(t, wantPlain, plain.probe)
	read, err := ReadFrom(bytes.NewReader(data), funnel.Int64)
	require.NoError(t, err)
	assert.Equal(t, wantAtomic, read.probe)
}
