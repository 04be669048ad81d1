package strategy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestByOrdinal(t *testing.T) {
	s, err := ByOrdinal(0)
	require.NoError(t, err)
	assert.Equal(t, Murmur128Mitz32, s)
	s, err = ByOrdinal(1)
	require.NoError(t, err)
	assert.Equal(t, Murmur128Mitz64, s)
	for _, o := range []int{-1, 2, 7, 128} {
		_, err := ByOrdinal(o)
		assert.True(t, errors.Is(err, ErrUnknownOrdinal), "ordinal %d: %v", o, err)
	}
	assert.Equal(t, "MURMUR128_MITZ_32", Murmur128Mitz32.String())
	assert.Equal(t, "MURMUR128_MITZ_64", Murmur128Mitz64.String())
	assert.Equal(t, 0, Murmur128Mitz32.Ordinal())
	assert.Equal(t, 1, Murmur128Mitz64.Ordinal())
}
