package redisfilter_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// TestHybridReshard moves 2,000 slots, among them some of a filter's
// shards, from one master to another with redis-cli --cluster reshard while
// 8 Hybrids put and sync, and measures what their Syncs moved: a slot that
// moves takes its keys whole, the change log with the bits, so that a
// Hybrid that finds a shard served by a node of another replication ID
// finds there the log as it saw it, and pushes and reads no shard whole;
// every value stays in every copy.
func TestHybridReshard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own and reshards it")
	}
	cl, rdb := faultCluster(t)
	ctx := testContext(t)
	// Shards whose logs hold seconds of the fleet's puts, as in
	// TestHybridFailover: a Sync held up while a slot moves must not find
	// its position trimmed.
	hs := openHybrids(ctx, t, rdb, 8, 3_000_000, redisfilter.WithShardBytes(512<<10))
	var untyped errorTally
	quiet := func() (before redisfilter.HybridStats) {
		for _, h := range hs {
			require.NoError(t, h.Sync(ctx))
			s := h.Stats()
			before.FullPushes += s.FullPushes
			before.FullPulls += s.FullPulls
			before.Sent += s.Sent
			before.Received += s.Received
			before.Syncs += s.Syncs
		}
		return before
	}
	var (
		mu     sync.Mutex
		put    []string
		synced atomic.Int64
		wg     sync.WaitGroup
	)
	// waitSyncs waits until the Hybrids have made n more Syncs.
	waitSyncs := func(what string, n int64) {
		want := synced.Load() + n
		redistest.WaitFor(t, what, time.Minute, func() (bool, error) { return synced.Load() >= want, nil })
	}
	stop := make(chan struct{})
	for i, h := range hs {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 91))
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				batch := make([]string, 20)
				for b := range batch {
					batch[b] = fmt.Sprintf("reshard%d-%d-%d-%d", i, j, b, r.Uint64())
				}
				h.PutMany(batch)
				err := h.Sync(ctx)
				synced.Add(1)
				untyped.note(err)
				if err == nil {
					mu.Lock()
					put = append(put, batch...)
					mu.Unlock()
				}
			}
		})
	}
	waitSyncs("the Hybrids' first Syncs", 2*int64(len(hs)))
	before := quiet()
	var source, target string
	require.NoError(t, rdb.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		id, err := node.ClusterMyID(ctx).Result()
		mu.Lock()
		defer mu.Unlock()
		if source == "" {
			source = id
		} else if target == "" && id != source {
			target = id
		}
		return err
	}))
	out, err := redistest.CLICommand("--cluster", "reshard", cl.Addrs()[0],
		"--cluster-from", source, "--cluster-to", target, "--cluster-slots", strconv.Itoa(2000),
		"--cluster-yes", "--cluster-pipeline", "10").CombinedOutput()
	require.NoError(t, err, "redis-cli --cluster reshard: %s", out)
	waitSyncs("Syncs after the reshard", 2*int64(len(hs)))
	close(stop)
	wg.Wait()
	rdb.ReloadState(ctx)
	after := quiet()
	quiet()
	syncs := after.Syncs - before.Syncs
	t.Logf("through the reshard, %d Syncs of 8 Hybrids: %d full pushes, %d shards read whole, %d bytes sent and %d received, %d and %d a Sync (before it, %d Syncs: %d full pushes, %d shards read whole, %d and %d bytes a Sync)",
		syncs, after.FullPushes-before.FullPushes, after.FullPulls-before.FullPulls,
		after.Sent-before.Sent, after.Received-before.Received, (after.Sent-before.Sent)/syncs, (after.Received-before.Received)/syncs,
		before.Syncs, before.FullPushes, before.FullPulls, before.Sent/before.Syncs, before.Received/before.Syncs)
	for i, h := range hs {
		for j, ok := range h.MightContainMany(nil, put) {
			require.True(t, ok, "Hybrid %d lacks %q", i, put[j])
		}
	}
	assert.NotEmpty(t, put)
	assert.Zero(t, after.FullPushes-before.FullPushes, "full pushes through the reshard")
	assert.Zero(t, after.FullPulls-before.FullPulls, "shards read whole through the reshard")
	untyped.check(t)
}
