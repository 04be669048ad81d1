package redisfilter

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"

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
	a, b := newConfig(params), newConfig(params)
	assert.Regexp(t, "^"+regexp.QuoteMeta(params)+" id=[0-9a-f]{16}$", a)
	assert.NotEqual(t, a, b, "every creation has an identity of its own")
	assert.Equal(t, params, paramsOf(a))
	assert.Equal(t, params, paramsOf(b))
	assert.Equal(t, params, paramsOf(params), "a config without an identity is its parameters")
	// A funnel name that looks like an identity does not confuse paramsOf:
	// the identity is the last field.
	odd := filterParams{bitSize: 64, k: 1, strategy: strategy.Murmur128Mitz64, funnel: "x id=1"}.String()
	assert.Equal(t, odd, paramsOf(newConfig(odd)))
}
