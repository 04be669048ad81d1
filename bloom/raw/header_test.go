package raw_test

import (
	"encoding/hex"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// TestParseHeader requires ParseHeader to read what WriteTo wrote, and to
// tell bytes that cannot begin a filter from a filter cut short.
func TestParseHeader(t *testing.T) {
	f, err := bloom.New(funnel.Int64, 1000, 0.01)
	require.NoError(t, err)
	data, err := f.MarshalBinary()
	require.NoError(t, err)
	h, err := raw.ParseHeader(data)
	require.NoError(t, err)
	assert.Equal(t, raw.Header{Strategy: raw.Strategy(f), NumHashFunctions: f.NumHashFunctions(), Words: f.BitSize() / 64}, h)
	assert.Equal(t, int64(len(data)), h.Size())

	for _, c := range []struct {
		name, hex string
		want      []error
	}{
		{"empty", "", []error{bloom.ErrCorrupt, io.ErrUnexpectedEOF}},
		{"short", "0105000000", []error{bloom.ErrCorrupt, io.ErrUnexpectedEOF}},
		{"unknown ordinal", "0205000000010000", []error{bloom.ErrCorrupt, strategy.ErrUnknownOrdinal}},
		{"short, unknown ordinal", "61", []error{bloom.ErrCorrupt, strategy.ErrUnknownOrdinal}},
		{"no words", "010500000000", []error{bloom.ErrCorrupt}},
		{"negative words", "0105ffffffff", []error{bloom.ErrCorrupt}},
	} {
		b, err := hex.DecodeString(c.hex)
		require.NoError(t, err)
		_, err = raw.ParseHeader(b)
		for _, want := range c.want {
			assert.True(t, errors.Is(err, want), "%s: %v does not wrap %v", c.name, err, want)
		}
	}

	// As large as Guava's format allows, whatever this platform holds.
	h, err = raw.ParseHeader([]byte{0, 0, 0x7f, 0xff, 0xff, 0xff})
	require.NoError(t, err)
	assert.Equal(t, int64(raw.HeaderSize+8*(1<<31-1)), h.Size())
}
