package redisfilter_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// TestHybridReshard moves 2,000 slots, among them some of a filter's
// shards, from one master to another with redis-cli --cluster reshard while
// 8 Hybrids put and sync, and measures what their Syncs moved: a slot that
// moves takes its keys whole, so every value stays in every copy, but a
// Hybrid that finds a shard served by a node of another replication ID
// cannot tell the move from a failover that lost bits, and pushes and
// reads that shard whole.
func TestHybridReshard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own and reshards it")
	}
	cl, rdb := faultCluster(t)
	ctx := testContext(t)
	hs := deltaHybrids(ctx, t, rdb, 8)
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
		mu  sync.Mutex
		put []string
		wg  sync.WaitGroup
	)
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
				if h.Sync(ctx) == nil {
					mu.Lock()
					put = append(put, batch...)
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
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
	out, err := exec.Command("redis-cli", "--cluster", "reshard", cl.addrs()[0],
		"--cluster-from", source, "--cluster-to", target, "--cluster-slots", strconv.Itoa(2000),
		"--cluster-yes", "--cluster-pipeline", "10").CombinedOutput()
	require.NoError(t, err, "redis-cli --cluster reshard: %s", out)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	rdb.ReloadState(ctx)
	after := quiet()
	quiet()
	t.Logf("through the reshard, %d Syncs of 8 Hybrids: %d full pushes, %d shards read whole, %d bytes sent and %d received (before it, %d Syncs: %d full pushes, %d shards read whole)",
		after.Syncs-before.Syncs, after.FullPushes-before.FullPushes, after.FullPulls-before.FullPulls,
		after.Sent-before.Sent, after.Received-before.Received, before.Syncs, before.FullPushes, before.FullPulls)
	for i, h := range hs {
		for j, ok := range h.MightContainMany(nil, put) {
			require.True(t, ok, "Hybrid %d lacks %q", i, put[j])
		}
	}
	assert.NotEmpty(t, put)
}
