package redisfilter

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"

	"github.com/mitzbloom/mitzbloom/strategy"
)

func TestConfigEncoding(t *testing.T) {
	plain := filterParams{bitSize: 9600, k: 7, strategy: strategy.Murmur128Mitz64, funnel: "funnel.String"}
	assert.Equal(t, `mitzbloom/redisfilter v1 bits=9600 k=7 strategy=MURMUR128_MITZ_64 funnel="funnel.String"`, plain.String())
	sharded := plain
	sharded.shardBytes = 64
	assert.Equal(t, plain.String()+" shard-bytes=64", sharded.String())
	window := filterParams{bitSize: 64, k: 1, strategy: strategy.Murmur128Mitz32, funnel: `orders "v1"`, window: " window=1h0m0s generations=3"}
	assert.Equal(t, `mitzbloom/redisfilter v1 bits=64 k=1 strategy=MURMUR128_MITZ_32 funnel="orders \"v1\"" window=1h0m0s generations=3`, window.String())

	params := sharded.String()
	a, b := newConfig(params, 1000, 0.01), newConfig(params, 1000, 0.01)
	assert.Regexp(t, "^"+regexp.QuoteMeta(params)+" id=[0-9a-f]{16} n=1000 p=0.01$", a)
	assert.NotEqual(t, a, b, "every creation has an identity of its own")
	assert.Equal(t, params, paramsOf(a))
	assert.Equal(t, params, paramsOf(b))
	assert.Equal(t, params, paramsOf(params), "a config without an identity is its parameters")
	// A funnel name that looks like an identity does not confuse paramsOf:
	// the identity is the last field.
	odd := filterParams{bitSize: 64, k: 1, strategy: strategy.Murmur128Mitz64, funnel: "x id=1"}.String()
	assert.Equal(t, odd, paramsOf(newConfig(odd, 1, 0.5)))
}

// TestSizedFor checks what an ErrMismatch says a stored filter was created
// for: the n and p its config records, or for a config without them, a
// range of n and p that holds the n and p that sized it.
func TestSizedFor(t *testing.T) {
	assert.Equal(t, "n = 1000 at p = 0.01", sizedFor(newConfig(filterParams{bitSize: 9600, k: 7, funnel: "f"}.String(), 1000, 0.01)))
	for _, n := range []int64{1000, 123_457, 1_000_000, 100_000_000} {
		for _, p := range []float64{0.1, 0.03, 0.01, 0.001, 1e-6} {
			bits, k, err := bloom.Size(n, p)
			require.NoError(t, err)
			cfg := filterParams{bitSize: bits, k: k, strategy: strategy.Murmur128Mitz64, funnel: "funnel.String"}.String() + " id=0123456789abcdef"
			var lo, hi int64
			var plo, phi float64
			said := sizedFor(cfg)
			_, err = fmt.Sscanf(said, "n from %d at p = %g to %d at p = %g", &lo, &plo, &hi, &phi)
			require.NoError(t, err, said)
			assert.True(t, lo <= n && n <= hi && plo <= p && p <= phi, "n = %d, p = %g: %s", n, p, said)
		}
	}
	assert.Equal(t, "unknown n and p", sizedFor("hello"))
}
