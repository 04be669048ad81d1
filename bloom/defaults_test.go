package bloom_test

import (
	"encoding/json"
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// decodesWithDefault puts vs in a filter of f, marshals it into a JSON
// document, and decodes the document into a struct with a nil *Filter
// field and into a map, whose values encoding/json makes itself: both must
// take f, the default funnel of T, and answer as the filter written does.
func decodesWithDefault[T any](t *testing.T, f funnel.Funnel[T], vs ...T) {
	t.Helper()
	written := putAll(mustNew(t, f, 100, 0.01), vs...)
	doc, err := json.Marshal(map[string]*bloom.Filter[T]{"f": written})
	require.NoError(t, err)

	var field struct{ F *bloom.Filter[T] }
	require.NoError(t, json.Unmarshal(doc, &field), "%v", f)
	var values map[string]*bloom.Filter[T]
	require.NoError(t, json.Unmarshal(doc, &values), "%v", f)
	var plain map[string]bloom.Filter[T]
	require.NoError(t, json.Unmarshal(doc, &plain), "%v", f)
	inPlain := plain["f"]
	for name, got := range map[string]*bloom.Filter[T]{"a nil field": field.F, "a map value": values["f"], "a map of values": &inPlain} {
		require.NotNil(t, got, "%v, %s", f, name)
		assert.Equal(t, f, raw.Funnel(got), "%v, %s: the default funnel", f, name)
		assert.True(t, got.Equal(written), "%v, %s", f, name)
		for _, v := range vs {
			assert.True(t, got.MightContain(v), "%v, %s: %v", f, name, v)
		}
	}
}

// TestDefaultFunnels decodes filters of every element type that has a
// default funnel, as the package documentation lists them.
func TestDefaultFunnels(t *testing.T) {
	decodesWithDefault(t, funnel.String, "a", "héllo")
	decodesWithDefault(t, funnel.Bytes, []byte("a"), []byte{0, 1, 2})
	decodesWithDefault(t, funnel.Int32, 1, -7)
	decodesWithDefault(t, funnel.Int64, 1, -7)
	decodesWithDefault(t, funnel.Uint64, 1, 1<<63)
	decodesWithDefault(t, funnel.Int, 1, -7)
	decodesWithDefault(t, funnel.Uint, 1, 1<<31)
	decodesWithDefault(t, funnel.Uint32, 1, 1<<31)
	decodesWithDefault(t, funnel.Float32, 1.5, -0.25)
	decodesWithDefault(t, funnel.Float64, 1.5, -0.25)
	decodesWithDefault(t, funnel.Bool, true)
	decodesWithDefault(t, funnel.Addr, netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("2001:db8::1"))
	decodesWithDefault(t, funnel.AddrPort, netip.MustParseAddrPort("10.0.0.1:443"))
	decodesWithDefault(t, funnel.IP, net.ParseIP("10.0.0.1"))
}

// TestNoDefaultFunnel: decoding into a zero filter of an element type
// without a built-in funnel is an error that says what to do, and decoding
// into one made beforehand works.
func TestNoDefaultFunnel(t *testing.T) {
	byHost := funnel.Func[visit](func(v visit, into funnel.Sink) { into.PutString(v.host) })
	written := putAll(mustNew(t, byHost, 100, 0.01), visit{"example.com"})
	doc, err := json.Marshal(written)
	require.NoError(t, err)

	var zero *bloom.Filter[visit]
	err = json.Unmarshal(doc, &zero)
	require.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, "decoding into a zero Filter[bloom_test.visit], such as the one encoding/json makes for a nil *Filter or a map value: "+
		"bloom_test.visit has no built-in funnel to decode with; make the Filter with its funnel (New or ReadFrom) before decoding into it, "+
		"and decode into a pointer to it rather than a map value")
	var zeroRotating *bloom.Rotating[visit]
	assert.ErrorContains(t, json.Unmarshal(doc, &zeroRotating), "make the Rotating with its funnel (NewRotating or ReadRotating)")
	var zeroScalable *bloom.Scalable[visit]
	assert.ErrorContains(t, json.Unmarshal(doc, &zeroScalable), "make the Scalable with its funnel (NewScalable or ReadScalable)")

	made := mustNew(t, byHost, 1, 0.5)
	require.NoError(t, json.Unmarshal(doc, &made))
	assert.True(t, made.MightContain(visit{"example.com"}))
}
