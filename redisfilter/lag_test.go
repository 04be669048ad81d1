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

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// TestHybridReplicaLag runs 8 Hybrids on a client that reads from replicas,
// in each of go-redis's routing modes, and with plain ReadOnly on a cluster
// of two replicas a master, which go-redis reads from at random, while every
// replica is held behind
// its master (CLIENT PAUSE WRITE on a replica holds its master's stream
// too), with change logs small enough to be trimmed, so that shards are
// read whole while replicas lag. A Hybrid whose log position and bits came
// from different nodes forgot the bits between them; here, after three
// more rounds of Sync, every value whose Sync returned nil must be in every
// local copy, and in Redis.
func TestHybridReplicaLag(t *testing.T) {
	readOnly := func(o *redis.ClusterOptions) { o.ReadOnly = true }
	modes := []struct {
		name     string
		opt      func(*redis.ClusterOptions)
		replicas int // a master's; the shared cluster has one
	}{
		{"RouteRandomly", func(o *redis.ClusterOptions) { o.ReadOnly, o.RouteRandomly = true, true }, 1},
		{"RouteByLatency", func(o *redis.ClusterOptions) { o.ReadOnly, o.RouteByLatency = true, true }, 1},
		{"ReadOnly", readOnly, 1},
		{"ReadOnly/two replicas", readOnly, 2},
	}
	if testing.Short() {
		modes = modes[:1]
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			ctx := testContext(t)
			var rdb *redis.ClusterClient
			if m.replicas == 1 {
				rdb = sharedCluster(t, m.opt)
				waitReplicas(ctx, t, rdb)
			} else {
				rdb = clusterWithReplicas(ctx, t, m.replicas, m.opt)
			}
			hybridsUnderLag(ctx, t, rdb, m.replicas)
		})
	}
}

// clusterWithReplicas starts a cluster of the test's own, 3 masters with
// replicas replicas each, and returns a client of it, both stopped when t
// ends, once every replica is online and in step.
func clusterWithReplicas(ctx context.Context, t *testing.T, replicas int, opts ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	t.Helper()
	cl := redistest.NewCluster(t, 3, replicas)
	rdb := newClusterClient(cl.Addrs(), opts...)
	t.Cleanup(func() { rdb.Close() })
	want := strconv.Itoa(replicas)
	redistest.WaitFor(t, "connected_slaves:"+want+" on every master", 30*time.Second, func() (bool, error) {
		err := rdb.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			if v, err := replication(ctx, node, "connected_slaves"); err != nil || v != want {
				return fmt.Errorf("%s: connected_slaves:%s (%v)", node, v, err)
			}
			return nil
		})
		return err == nil, err
	})
	waitReplicas(ctx, t, rdb)
	return rdb
}

func hybridsUnderLag(ctx context.Context, t *testing.T, rdb *redis.ClusterClient, replicas int) {
	const fleet = 8
	hs := deltaHybrids(ctx, t, rdb, fleet, redisfilter.WithChangeLog(4096))
	var (
		mu      sync.Mutex
		acked   []string // values whose Hybrid's Sync returned nil after their Put
		syncs   atomic.Int64
		wg      sync.WaitGroup
		untyped errorTally
	)
	stop := make(chan struct{})
	for i, h := range hs {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 61))
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				batch := make([]string, 100)
				for b := range batch {
					batch[b] = fmt.Sprintf("lag%d-%d-%d-%d", i, j, b, r.Uint64())
				}
				h.PutMany(batch)
				sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				err := h.Sync(sctx)
				cancel()
				syncs.Add(1)
				untyped.note(err)
				if err == nil {
					mu.Lock()
					acked = append(acked, batch...)
					mu.Unlock()
				}
				// Each Hybrid on a schedule of its own: a pause of the
				// load's, not a wait for anything.
				time.Sleep(time.Duration(r.IntN(20)) * time.Millisecond)
			}
		})
	}
	// The puts end while the replicas are held, and the Syncs after, which
	// read whole no shard whose log still holds their position, after the
	// replicas caught up. The pause ends at CLIENT UNPAUSE, or in a minute
	// should the test end first.
	waitCount := func(what string, n int64) {
		want := syncs.Load() + n
		redistest.WaitFor(t, what, time.Minute, func() (bool, error) { return syncs.Load() >= want, nil })
	}
	waitCount("the Hybrids' first Syncs", 3*fleet)
	unpause := func() error {
		return rdb.ForEachSlave(ctx, func(ctx context.Context, node *redis.Client) error {
			return node.Do(ctx, "CLIENT", "UNPAUSE").Err()
		})
	}
	t.Cleanup(func() { unpause() })
	require.NoError(t, rdb.ForEachSlave(ctx, func(ctx context.Context, node *redis.Client) error {
		return node.Do(ctx, "CLIENT", "PAUSE", 60_000, "WRITE").Err()
	}))
	// As many as a second's, on a quiet machine: enough for the logs to
	// be trimmed.
	waitCount("Syncs while the replicas are held", 40*fleet)
	close(stop)
	wg.Wait()
	require.NoError(t, unpause())
	replicated(ctx, t, rdb, replicas)
	for round := range 3 {
		for i, h := range hs {
			require.NoError(t, h.Sync(ctx), "round %d, Hybrid %d", round, i)
		}
	}
	var fullPulls int64
	for _, h := range hs {
		fullPulls += h.Stats().FullPulls
	}
	t.Logf("%d values acknowledged; %d shards read whole", len(acked), fullPulls)
	f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
	require.NoError(t, err)
	inRedis, err := f.MightContainMany(ctx, nil, acked)
	require.NoError(t, err)
	missing := 0
	for _, ok := range inRedis {
		if !ok {
			missing++
		}
	}
	assert.Zero(t, missing, "values acknowledged but missing in Redis")
	for i, h := range hs {
		missing := 0
		for _, ok := range h.MightContainMany(nil, acked) {
			if !ok {
				missing++
			}
		}
		assert.Zero(t, missing, "values missing from Hybrid %d's copy", i)
	}
	untyped.check(t)
}
