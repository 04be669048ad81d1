package bloom_test

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// A Scalable implements the encoding interfaces a Filter and a Rotating do.
var (
	_ io.WriterTo                = (*bloom.Scalable[string])(nil)
	_ encoding.BinaryMarshaler   = (*bloom.Scalable[string])(nil)
	_ encoding.BinaryUnmarshaler = (*bloom.Scalable[string])(nil)
	_ encoding.TextMarshaler     = (*bloom.Scalable[string])(nil)
	_ encoding.TextUnmarshaler   = (*bloom.Scalable[string])(nil)
)

// TestScalableEncodings checks that a Scalable's binary and text forms are
// the bytes WriteTo writes, and that they decode into a Scalable made with
// the same parameters, which goes on growing, and into a zero one, which
// answers lookups.
func TestScalableEncodings(t *testing.T) {
	s, vs := grownScalable(t, 4)
	written := scalableBytes(t, s)
	bin, err := s.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, written, bin)
	text, err := s.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, base64.StdEncoding.EncodeToString(written), string(text))

	made := mustNewScalable(t, funnel.String, 10, 0.1)
	require.NoError(t, made.UnmarshalText(text))
	assert.Equal(t, written, scalableBytes(t, made))
	for _, v := range vs {
		require.True(t, made.MightContain(v), v)
	}
	stages := len(made.Stats().Stages)
	for i := 0; len(made.Stats().Stages) == stages; i++ {
		made.Put(fmt.Sprint("more", i))
	}

	var zero bloom.Scalable[string]
	require.NoError(t, zero.UnmarshalBinary(bin))
	assert.Equal(t, written, scalableBytes(t, &zero))
	assert.Contains(t, zero.String(), "read-only")
	assert.Panics(t, func() { zero.Put("x") })

	// Bytes that another sizing made, or that are not a Scalable's, are
	// refused, and leave the Scalable as it was.
	other := mustNewScalable(t, funnel.String, 20, 0.1)
	before := scalableBytes(t, other)
	for name, c := range map[string]struct {
		data []byte
		want error
	}{
		"another sizing": {bin, bloom.ErrIncompatible},
		"empty":          {nil, bloom.ErrCorrupt},
		"truncated":      {before[:len(before)-1], bloom.ErrCorrupt},
	} {
		assert.ErrorIs(t, other.UnmarshalBinary(c.data), c.want, name)
		assert.Equal(t, before, scalableBytes(t, other), name)
	}
	assert.ErrorIs(t, other.UnmarshalText([]byte("*")), bloom.ErrCorrupt)
	var noDefault bloom.Scalable[visit]
	assert.ErrorIs(t, noDefault.UnmarshalBinary(bin), bloom.ErrInvalidArgument)
	assert.ErrorIs(t, noDefault.UnmarshalText(text), bloom.ErrInvalidArgument)

	// A zero Scalable has nothing to write: an error, never a panic.
	var empty bloom.Scalable[string]
	for name, marshal := range map[string]func() ([]byte, error){
		"MarshalText":   empty.MarshalText,
		"MarshalBinary": empty.MarshalBinary,
		"WriteTo":       func() ([]byte, error) { _, err := empty.WriteTo(&bytes.Buffer{}); return nil, err },
	} {
		_, err := marshal()
		assert.ErrorIs(t, err, bloom.ErrInvalidArgument, name)
		assert.ErrorContains(t, err, name+" of a zero Scalable", name)
	}
	assert.Equal(t, "bloom.Scalable{}", empty.String())
}

// TestScalableJSON: a Scalable in a JSON document is a string, which
// decodes into a Scalable made beforehand, a nil pointer or a map value.
func TestScalableJSON(t *testing.T) {
	s, vs := grownScalable(t, 3)
	doc, err := json.Marshal(map[string]*bloom.Scalable[string]{"clients": s})
	require.NoError(t, err)
	assert.NotContains(t, string(doc), "{}")

	var back map[string]*bloom.Scalable[string]
	require.NoError(t, json.Unmarshal(doc, &back))
	for _, v := range vs {
		require.True(t, back["clients"].MightContain(v), v)
	}
	assert.Equal(t, scalableBytes(t, s), scalableBytes(t, back["clients"]))

	made := struct{ Clients *bloom.Scalable[string] }{mustNewScalable(t, funnel.String, 10, 0.1)}
	require.NoError(t, json.Unmarshal([]byte(`{"Clients":`+string(doc[len(`{"clients":`):])), &made))
	made.Clients.Put("new")
	assert.True(t, made.Clients.MightContain("new"))
}

// TestScalableUnmarshalConcurrent decodes into a Scalable while other
// goroutines put and look values up in it, for the race detector: calls
// that run meanwhile use the old stages or the new ones.
func TestScalableUnmarshalConcurrent(t *testing.T) {
	s, vs := grownScalable(t, 3)
	data := scalableBytes(t, s)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				if g%2 == 0 {
					s.Put(fmt.Sprint("g", g, "-", i))
				} else {
					_ = s.MightContain(vs[i%len(vs)])
				}
			}
		}()
	}
	for range 20 {
		require.NoError(t, s.UnmarshalBinary(data))
	}
	wg.Wait()
	require.NoError(t, s.UnmarshalBinary(data))
	for _, v := range vs {
		require.True(t, s.MightContain(v), v)
	}
}
