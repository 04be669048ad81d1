package redisfilter_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// TestOptions checks that Open takes bloom's options, which set what they
// set for bloom.New, beside its own, and that bloom refuses redisfilter's.
func TestOptions(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	opts := []bloom.Option{bloom.WithLegacyHashCount(), bloom.WithStrategy(strategy.Murmur128Mitz32)}
	// n = 3 is where the legacy hash count differs from current Guava's.
	local, err := bloom.New(funnel.String, 3, 0.01, opts...)
	require.NoError(t, err)
	f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 3, 0.01, append(opts, redisfilter.WithShardBytes(8))...)
	require.NoError(t, err)
	assert.Equal(t, local.NumHashFunctions(), f.NumHashFunctions())
	assert.Equal(t, local.BitSize(), f.BitSize())
	assert.Equal(t, strategy.Murmur128Mitz32, f.Strategy())
	assert.Len(t, f.Keys(), int(f.BitSize()/64), "WithShardBytes(8) is a shard per word")
	_, kNow, err := bloom.Size(3, 0.01)
	require.NoError(t, err)
	assert.NotEqual(t, kNow, f.NumHashFunctions(), "WithLegacyHashCount changed k")

	_, err = bloom.New(funnel.String, 1000, 0.01, redisfilter.WithShardBytes(64))
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, "redisfilter.WithShardBytes is not an option of package bloom")
	_, err = redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 1000, 0.01, bloom.WithUnsynchronizedWrites())
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, "bloom.WithUnsynchronizedWrites")
	_, err = redisfilter.OpenWindowed(ctx, rdb, filterName(t), funnel.String, 1000, 0.01, time.Hour, 2, bloom.WithClock(nil))
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
