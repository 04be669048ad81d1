package bloom_test

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
)

var (
	_ encoding.TextMarshaler   = (*bloom.Filter[string])(nil)
	_ encoding.TextUnmarshaler = (*bloom.Filter[string])(nil)
	_ encoding.TextMarshaler   = (*bloom.Rotating[string])(nil)
	_ encoding.TextUnmarshaler = (*bloom.Rotating[string])(nil)
)

// TestFilterText checks that a filter's text is its binary form in standard
// base64, and that UnmarshalText reads it back
// into a filter of another size, keeping the funnel, as UnmarshalBinary
// does.
func TestFilterText(t *testing.T) {
	for _, n := range []int64{1, 1000, 100_000} { // 0, 1 and 2 bytes of padding
		f := putAll(mustNew(t, funnel.String, n, 0.01), "a", "b", "héllo")
		bin, err := f.MarshalBinary()
		require.NoError(t, err)
		text, err := f.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, base64.StdEncoding.EncodeToString(bin), string(text))

		back := mustNew(t, funnel.String, 5, 0.5)
		require.NoError(t, back.UnmarshalText(text))
		assert.True(t, back.Equal(f), "n=%d: UnmarshalText gave %v, want %v", n, back, f)
		assert.True(t, back.MightContain("héllo"))
	}
}

// TestFilterTextErrors checks that text which is not base64, or not a filter,
// is an error wrapping ErrCorrupt that leaves the filter as it was, and that
// the zero Filter gives errors, not panics, when encoded or decoded into.
func TestFilterTextErrors(t *testing.T) {
	f := putAll(mustNew(t, funnel.String, 100, 0.01), "kept")
	before := f.Copy()
	for _, text := range []string{
		"not base64!",
		"AQUAAAAB",             // a header announcing a word, and no word
		"AQUAAAABAAAAAAAAAAM",  // missing padding
		"AQUAAAABAAAAAAAAAAMA", // a byte after the filter
	} {
		err := f.UnmarshalText([]byte(text))
		assert.ErrorIs(t, err, bloom.ErrCorrupt, "%q", text)
		assert.True(t, f.Equal(before), "UnmarshalText(%q) changed the filter", text)
	}
	require.NoError(t, f.UnmarshalText([]byte("AQUAAAABAAAAAAAAAAM=")), "a filter of one word")
	assert.EqualValues(t, 64, f.BitSize())

	var noDefault bloom.Filter[visit]
	err := noDefault.UnmarshalText([]byte("AQUAAAABAAAAAAAAAAM="))
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, "make the Filter with its funnel (New or ReadFrom) before decoding into it")
	var zero bloom.Filter[string]
	for name, marshal := range map[string]func() ([]byte, error){
		"MarshalText":   zero.MarshalText,
		"MarshalBinary": zero.MarshalBinary,
		"WriteTo":       func() ([]byte, error) { _, err := zero.WriteTo(&bytes.Buffer{}); return nil, err },
	} {
		_, err := marshal()
		assert.ErrorIs(t, err, bloom.ErrInvalidArgument, name)
		assert.ErrorContains(t, err, name+" of a zero Filter", name)
	}
}

// TestRotatingText checks a Rotating's text, both generations' bytes in
// base64, and that UnmarshalText checks them against the Rotating's sizing,
// as UnmarshalBinary does.
func TestRotatingText(t *testing.T) {
	clock := bloomtest.NewClock(epoch)
	r := mustNewRotating(t, funnel.String, 1000, 0.01, time.Minute, bloom.WithClock(clock))
	r.Put("old")
	clock.Advance(time.Minute)
	r.Put("new")
	bin, err := r.MarshalBinary()
	require.NoError(t, err)
	text, err := r.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, base64.StdEncoding.EncodeToString(bin), string(text))

	back := mustNewRotating(t, funnel.String, 1000, 0.01, time.Minute, bloom.WithClock(clock))
	require.NoError(t, back.UnmarshalText(text))
	again, err := back.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, bin, again)
	assert.True(t, back.MightContain("old"))
	assert.True(t, back.MightContain("new"))

	other := mustNewRotating(t, funnel.String, 10, 0.01, time.Minute, bloom.WithClock(clock))
	assert.ErrorIs(t, other.UnmarshalText(text), bloom.ErrIncompatible)
	assert.ErrorIs(t, back.UnmarshalText([]byte("*")), bloom.ErrCorrupt)

	var noDefault bloom.Rotating[visit]
	assert.ErrorIs(t, noDefault.UnmarshalText(text), bloom.ErrInvalidArgument)
	var zero bloom.Rotating[string]
	_, err = zero.MarshalText()
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	_, err = zero.MarshalBinary()
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	_, err = zero.WriteTo(&bytes.Buffer{})
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
}

// TestFilterJSON checks that a struct holding a *Filter and a *Rotating
// marshals them as strings, never as {}, and unmarshals into filters made
// beforehand, which keep their funnels and parameters, and into nil
// pointers, which take the element type's default funnel.
func TestFilterJSON(t *testing.T) {
	type state struct {
		Seen   *bloom.Filter[string]   `json:"seen"`
		Recent *bloom.Rotating[string] `json:"recent"`
		None   *bloom.Filter[string]   `json:"none"`
	}
	clock := bloomtest.NewClock(epoch)
	in := state{
		Seen:   putAll(mustNew(t, funnel.String, 1000, 0.01), "a", "b"),
		Recent: mustNewRotating(t, funnel.String, 100, 0.01, time.Minute, bloom.WithClock(clock)),
	}
	in.Recent.Put("c")
	doc, err := json.Marshal(in)
	require.NoError(t, err)
	seenText, err := in.Seen.MarshalText()
	require.NoError(t, err)
	recentText, err := in.Recent.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, `{"seen":"`+string(seenText)+`","recent":"`+string(recentText)+`","none":null}`, string(doc))
	assert.NotContains(t, string(doc), "{}")

	out := state{
		Seen:   mustNew(t, funnel.String, 1, 0.5),
		Recent: mustNewRotating(t, funnel.String, 100, 0.01, time.Minute, bloom.WithClock(clock)),
	}
	require.NoError(t, json.Unmarshal(doc, &out))
	assert.True(t, out.Seen.Equal(in.Seen))
	assert.True(t, out.Recent.MightContain("c"))
	assert.True(t, out.Recent.Put("d"), "a Rotating made beforehand goes on rotating")
	assert.Nil(t, out.None)

	var empty state
	require.NoError(t, json.Unmarshal(doc, &empty))
	assert.True(t, empty.Seen.Equal(in.Seen), "a nil *Filter decodes with funnel.String")
	assert.True(t, empty.Recent.MightContain("c"))
	assert.Panics(t, func() { empty.Recent.Put("d") }, "a Rotating decoded into nil cannot rotate")
	assert.Nil(t, empty.None)

	_, err = json.Marshal(state{Seen: new(bloom.Filter[string])})
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument, "a zero Filter is an error, not a panic or {}")
}
