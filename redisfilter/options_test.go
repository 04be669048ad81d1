package redisfilter_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// TestOptions checks that Open's WithStrategy and WithLegacyHashCount set
// what bloom's options of the same names set for bloom.New, beside Open's
// own options, and that neither package's Options are the other's: given
// to the other's functions, they do not compile.
func TestOptions(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	// n = 3 is where the legacy hash count differs from current Guava's.
	local, err := bloom.New(funnel.String, 3, 0.01, bloom.WithLegacyHashCount(), bloom.WithStrategy(strategy.Murmur128Mitz32))
	require.NoError(t, err)
	name := filterName(t)
	f, err := redisfilter.Open(ctx, rdb, name, funnel.String, 3, 0.01,
		redisfilter.WithLegacyHashCount(), redisfilter.WithStrategy(strategy.Murmur128Mitz32), redisfilter.WithShardBytes(8))
	require.NoError(t, err)
	assert.Equal(t, local.NumHashFunctions(), f.NumHashFunctions())
	assert.Equal(t, local.BitSize(), f.BitSize())
	assert.Equal(t, strategy.Murmur128Mitz32, f.Strategy())
	assert.Len(t, f.Keys(), int(f.BitSize()/64), "WithShardBytes(8) is a shard per word")
	_, kNow, err := bloom.Size(3, 0.01)
	require.NoError(t, err)
	assert.NotEqual(t, kNow, f.NumHashFunctions(), "WithLegacyHashCount changed k")

	bloomOption := reflect.TypeFor[bloom.Option]()
	assert.False(t, reflect.TypeOf(redisfilter.WithShardBytes(64)).AssignableTo(bloomOption), "bloom.New takes redisfilter.WithShardBytes")
	assert.False(t, bloomOption.AssignableTo(reflect.TypeFor[redisfilter.Option]()), "redisfilter.Open takes a bloom.Option")
	// The zero Option changes nothing: the filter opens again with it.
	_, err = redisfilter.Open(ctx, rdb, name, funnel.String, 3, 0.01,
		redisfilter.WithLegacyHashCount(), redisfilter.Option{}, redisfilter.WithStrategy(strategy.Murmur128Mitz32), redisfilter.WithShardBytes(8))
	require.NoError(t, err)
	_, err = redisfilter.OpenWindowed(ctx, rdb, filterName(t), funnel.String, 1000, 0.01, time.Hour, 2, redisfilter.WithClock(nil))
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, "clock is nil")
}

// TestKeySlotsRecorded checks the recording that TestKeySlot checks the
// package's CRC16 against, with a real cluster's CLUSTER KEYSLOT.
func TestKeySlotsRecorded(t *testing.T) {
	rdb := sharedCluster(t)
	ctx := testContext(t)
	for tag, want := range redisfilter.RecordedSlots(t) {
		got, err := rdb.ClusterKeySlot(ctx, "{"+tag+"}").Result()
		require.NoError(t, err)
		assert.EqualValues(t, want, got, "CLUSTER KEYSLOT {%s}", tag)
	}
}
