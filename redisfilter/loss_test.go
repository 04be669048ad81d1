package redisfilter_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// TestPartialLoss loses the shards of a filter that one node serves (on
// the cluster, every shard of a master that does not serve the first; on
// one server, two shards) after a Filter put values that a Hybrid has not
// pulled yet: a Hybrid's Sync, or an Open WithRecreate, creates again the
// shards lost and no other, so that every value with no bit in them still
// answers true, in Redis and in the Hybrid's copy. The bits of the shards
// that survived are never cleared: a library may report a loss, never
// cause one.
func TestPartialLoss(t *testing.T) {
	for _, how := range []string{"Sync", "WithRecreate"} {
		t.Run(how, func(t *testing.T) {
			eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
				ctx := testContext(t)
				name := filterName(t)
				f := openSharded(ctx, t, rdb, name, 300_000) // 6 shards
				h, err := redisfilter.NewHybrid(ctx, f)
				require.NoError(t, err)
				other, err := redisfilter.NewHybrid(ctx, f)
				require.NoError(t, err)
				values := randomStrings(rand.New(rand.NewPCG(71, 72)), 3000)
				require.NoError(t, f.PutMany(ctx, values))
				// A Merge, so that the servers know merge.lua: a script
				// they do not know is sent twice, by its SHA-1 and again.
				require.NoError(t, f.Merge(ctx, mustLocal(t, 300_000)))
				lost := lostShards(ctx, t, rdb, f)
				var survived []string
				for _, v := range values {
					touched := false
					for _, s := range lost {
						touched = touched || touches(f, v, s)
					}
					if !touched {
						survived = append(survived, v)
					}
				}
				require.NotEmpty(t, survived)
				t.Logf("shards %v lost; %d of %d values have no bit in them", lost, len(survived), len(values))
				for _, s := range lost {
					require.NoError(t, rdb.Del(ctx, f.Keys()[s], f.ConfigKeys()[s], f.Keys()[s]+":hold", f.Keys()[s]+":changes", f.Keys()[s]+":changes-state").Err())
				}

				if how == "Sync" {
					// The Hybrid that rebuilds the filter, and another that
					// finds it rebuilt, each push and pull the shards lost,
					// and no other.
					for i, h := range []*redisfilter.Hybrid[string]{h, other} {
						require.NoError(t, h.Sync(ctx))
						st := h.Stats().Last
						t.Logf("Hybrid %d: %v", i, st)
						assert.Equal(t, len(lost), st.FullPulls, "shards read whole: the lost ones only")
						assert.True(t, st.FullPush, "the shards lost are pushed whole")
						assert.Less(t, st.Sent, int64(len(lost)+1)*shardBytes, "pushed more than the shards lost")
						for i, ok := range h.MightContainMany(nil, survived) {
							require.True(t, ok, "%q is missing from the Hybrid's copy", survived[i])
						}
					}
				} else {
					_, err := redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes), redisfilter.WithRecreate())
					require.NoError(t, err)
				}
				again, err := redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
				require.NoError(t, err)
				found, err := again.MightContainMany(ctx, nil, survived)
				require.NoError(t, err)
				missing := 0
				for _, ok := range found {
					if !ok {
						missing++
					}
				}
				assert.Zero(t, missing, "values that survived the loss answer false")
			})
		})
	}
}

// lostShards returns the shards of f that one node serves: on a cluster,
// those of a master that does not serve the first shard, and on one
// server shards 2 and 4.
func lostShards(ctx context.Context, t *testing.T, rdb redis.UniversalClient, f *redisfilter.Filter[string]) []int {
	t.Helper()
	cl, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return []int{2, 4}
	}
	first, err := cl.MasterForKey(ctx, f.Keys()[0])
	require.NoError(t, err)
	byNode := map[string][]int{}
	for s, key := range f.Keys() {
		node, err := cl.MasterForKey(ctx, key)
		require.NoError(t, err)
		if node.Options().Addr != first.Options().Addr {
			byNode[node.Options().Addr] = append(byNode[node.Options().Addr], s)
		}
	}
	var lost []int
	for _, shards := range byNode {
		if len(shards) > len(lost) {
			lost = shards
		}
	}
	require.NotEmpty(t, lost, "every shard is on the first shard's master")
	return lost
}

// TestHybridHistoryOfOneShard makes a Hybrid find the log of one shard
// other than it saw it, as after a failover that lost writes: its next Sync
// pushes that shard of its filter whole and reads it whole, and no other.
// A server of another replication ID whose log holds what the Hybrid saw
// costs nothing whole.
func TestHybridHistoryOfOneShard(t *testing.T) {
	ctx := testContext(t)
	hs := deltaHybrids(ctx, t, sharedClient(t), 1)
	h := hs[0]
	h.PutMany(randomStrings(rand.New(rand.NewPCG(73, 74)), 2000))
	require.NoError(t, h.Sync(ctx))
	redisfilter.ForgetHistory(h, 2)
	require.NoError(t, h.Sync(ctx))
	st := h.Stats().Last
	t.Log("another replication ID: ", st)
	assert.False(t, st.FullPush)
	assert.Zero(t, st.FullPulls)
	redisfilter.MisrememberLog(h, 3)
	require.NoError(t, h.Sync(ctx))
	st = h.Stats().Last
	t.Log("another log: ", st)
	assert.True(t, st.FullPush)
	assert.Equal(t, "history", st.FullPushReason)
	assert.Equal(t, 1, st.FullPulls)
	// One shard of 64 KiB, sent twice if the server did not know merge.lua
	// yet, where the filter is of 6.
	assert.Less(t, st.Sent, int64(3*shardBytes), "pushed more than the shard")
	require.NoError(t, h.Sync(ctx))
	st = h.Stats().Last
	assert.False(t, st.FullPush, "the Sync after")
	assert.Zero(t, st.FullPulls, "the Sync after")
}
