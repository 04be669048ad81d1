package redisfilter_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// hybridPuts makes each of a fleet of Hybrids put 20 new values and Sync
// every 50 ms, until finish, and keeps the values of the Syncs that
// returned nil, and every Sync's stats by phase.
type hybridPuts struct {
	hs    []*redisfilter.Hybrid[string]
	phase atomic.Int32
	stop  chan struct{}
	wg    sync.WaitGroup

	mu      sync.Mutex
	put     []string
	syncs   map[int32][]redisfilter.SyncStats
	untyped errorTally
}

func startPuts(ctx context.Context, hs []*redisfilter.Hybrid[string], prefix string) *hybridPuts {
	p := &hybridPuts{hs: hs, stop: make(chan struct{}), syncs: map[int32][]redisfilter.SyncStats{}}
	for i, h := range hs {
		p.wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 93))
			for j := 0; ; j++ {
				select {
				case <-p.stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				batch := make([]string, 20)
				for b := range batch {
					batch[b] = fmt.Sprintf("%s%d-%d-%d-%d", prefix, i, j, b, r.Uint64())
				}
				h.PutMany(batch)
				sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				err := h.Sync(sctx)
				cancel()
				p.record(h, err == nil, batch)
			}
		})
	}
	return p
}

// record keeps the stats of h's last Sync, and batch if it succeeded.
func (p *hybridPuts) record(h *redisfilter.Hybrid[string], ok bool, batch []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	phase := p.phase.Load()
	st := h.Stats().Last
	p.syncs[phase] = append(p.syncs[phase], st)
	p.untyped.note(st.Err)
	if ok {
		p.put = append(p.put, batch...)
	}
}

// syncAll makes every Hybrid Sync until it succeeds, for up to a minute
// each, and records the Syncs.
func (p *hybridPuts) syncAll(ctx context.Context, t *testing.T) {
	t.Helper()
	for i, h := range p.hs {
		redistest.WaitFor(t, fmt.Sprintf("a Sync of Hybrid %d to succeed", i), time.Minute, func() (bool, error) {
			err := h.Sync(ctx)
			p.record(h, false, nil)
			return err == nil, err
		})
	}
}

// waitSyncs waits, for up to a minute, until the Hybrids have made n more
// Syncs in the phase, that succeeded if ok is set.
func (p *hybridPuts) waitSyncs(t *testing.T, n int, ok bool) {
	t.Helper()
	phase := p.phase.Load()
	count := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		c := 0
		for _, st := range p.syncs[phase] {
			if !ok || st.Err == nil {
				c++
			}
		}
		return c
	}
	want := count() + n
	redistest.WaitFor(t, fmt.Sprintf("%d Syncs (ok %t) in phase %d", n, ok, phase), time.Minute, func() (bool, error) {
		return count() >= want, nil
	})
}

func (p *hybridPuts) finish() []string {
	close(p.stop)
	p.wg.Wait()
	return p.put
}

// summary sums up the Syncs of phase.
type syncSummary struct {
	syncs, failed, fullPushes, fullPulls int
	sent, received                       int64
	reasons                              map[redisfilter.FullPushReason]int
	mostPulls                            int   // shards read whole by one Sync
	mostFullSent                         int64 // bytes sent by a Sync that pushed whole
}

func (p *hybridPuts) summary(phase int32) syncSummary {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := syncSummary{reasons: map[redisfilter.FullPushReason]int{}}
	for _, st := range p.syncs[phase] {
		s.syncs++
		if st.Err != nil {
			s.failed++
		}
		s.fullPulls += st.FullPulls
		s.mostPulls = max(s.mostPulls, st.FullPulls)
		s.sent += st.Sent
		s.received += st.Received
		if st.FullPush {
			s.fullPushes++
			s.reasons[st.FullPushReason]++
			s.mostFullSent = max(s.mostFullSent, st.Sent)
		}
	}
	return s
}

func (s syncSummary) String() string {
	return fmt.Sprintf("%d Syncs (%d failed): %d full pushes %v, %d shards read whole (at most %d a Sync), %d bytes sent and %d received, %d and %d a Sync",
		s.syncs, s.failed, s.fullPushes, s.reasons, s.fullPulls, s.mostPulls, s.sent, s.received, s.sent/int64(max(s.syncs, 1)), s.received/int64(max(s.syncs, 1)))
}

// onOther returns the first of n shards not in these.
func onOther(these []int, n int) int {
	for s := range n {
		if !slices.Contains(these, s) {
			return s
		}
	}
	panic("every shard is on one master")
}

// TestHybridFailover fails over the master of a filter's first shard while
// 8 Hybrids put and sync, twice. First with CLUSTER FAILOVER on its
// replica, in step, which loses no write: the promoted replica has another
// replication ID, but the change logs the Hybrids saw, so that no Hybrid
// pushes or reads a shard whole. Then, once the old master follows the new
// one as its replica, it stops it, makes the master drop it, kills the
// master after Syncs that reached no replica, and lets the cluster promote
// the replica, which lacks them: the Hybrids that pushed or read some of
// them find the log of a shard of that master shorter or other than they
// saw it, and push and read whole that shard, no other.
// Last it flushes another master: the Hybrids rebuild its shards, and push
// and read those whole, no other. Every value whose Sync returned nil is
// in Redis, and in every copy.
func TestHybridFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own and fails it over")
	}
	cl, rdb := faultCluster(t)
	ctx := testContext(t)
	// Shards whose logs hold a few seconds of the fleet's puts, which a
	// Hybrid that cannot sync while a master is down would otherwise find
	// trimmed, and read whole, on every master.
	const n, shardBytes = 3_000_000, 512 << 10 // 7 shards
	sharded := redisfilter.WithShardBytes(shardBytes)
	hs := openHybrids(ctx, t, rdb, 8, n, sharded)
	f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, n, 0.01, sharded)
	require.NoError(t, err)
	master, err := rdb.MasterForKey(ctx, f.Keys()[0])
	require.NoError(t, err)
	onMaster := shardsOn(ctx, t, rdb, f, master)
	old, replica := masterAndReplica(ctx, t, cl, master)
	oldClient, replicaClient := newClient(old.Socket()), newClient(replica.Socket())
	t.Cleanup(func() { oldClient.Close(); replicaClient.Close() })

	p := startPuts(ctx, hs, "failover")
	p.waitSyncs(t, len(hs), true)
	p.syncAll(ctx, t)

	p.phase.Store(1)
	require.NoError(t, replicaClient.ClusterFailover(ctx).Err())
	waitPromoted(ctx, t, replica)
	waitRoutedTo(ctx, t, rdb, f.Keys()[0], replica.Addr())
	// The old master may learn that it lost the election seconds after the
	// cluster does. Stopped before it has followed the new master, it would
	// not be a replica that lags: Redis never promotes a replica that has
	// not synced with its master ("Disconnected from master for longer than
	// allowed"), and it would stay one in the second failover.
	waitReplication(ctx, t, oldClient, "master_port", strconv.Itoa(replica.Port()))
	waitReplication(ctx, t, oldClient, "master_link_status", "up")
	p.syncAll(ctx, t)
	lossless := p.summary(1)
	t.Logf("shards %v on the master; through CLUSTER FAILOVER, %v", onMaster, lossless)
	assert.Zero(t, lossless.fullPushes, "full pushes through a failover without loss")
	assert.Zero(t, lossless.fullPulls, "shards read whole through a failover without loss")

	p.phase.Store(2)
	require.NoError(t, old.Signal(syscall.SIGSTOP))
	// The sockets' buffers would hold the master's stream for the stopped
	// replica to read when it resumes: a small limit of the master's
	// buffer for its replica makes it drop the replica once they are
	// full, and what the Hybrids push after that reaches no replica.
	require.NoError(t, replicaClient.ConfigSet(ctx, "client-output-buffer-limit", "replica 64kb 64kb 0").Err())
	r := rand.New(rand.NewPCG(94, 95))
	redistest.WaitFor(t, "the master to drop its stopped replica", 30*time.Second, func() (bool, error) {
		_ = f.PutMany(ctx, randomStrings(r, 2000))
		v, err := replication(ctx, replicaClient, "connected_slaves")
		return v == "0", err
	})
	// Syncs that the master took and no replica has.
	p.waitSyncs(t, len(hs), true)
	p.phase.Store(3)
	replica.Halt(syscall.SIGKILL)
	require.NoError(t, old.Signal(syscall.SIGCONT))
	waitPromoted(ctx, t, old)
	waitRoutedTo(ctx, t, rdb, f.Keys()[0], old.Addr())
	for range 3 {
		p.syncAll(ctx, t)
	}
	lossy := p.summary(3)
	t.Logf("through a failover that lost a second of writes, %v", lossy)
	assert.Positive(t, lossy.fullPushes, "no Hybrid pushed whole what the server lost")
	assert.Equal(t, lossy.fullPushes, lossy.reasons[redisfilter.FullPushHistory], "full pushes for another reason")
	assert.LessOrEqual(t, lossy.mostPulls, len(onMaster), "a Sync read whole shards of another master")
	// Each shard sent twice if the server did not know merge.lua.
	assert.Less(t, lossy.mostFullSent, int64(2*len(onMaster)+1)*shardBytes, "a Sync pushed more than the master's shards")

	// A FLUSHALL of another master: the Hybrids rebuild its shards, and
	// push and read whole those only.
	p.phase.Store(4)
	flushed, err := rdb.MasterForKey(ctx, f.Keys()[onOther(onMaster, len(f.Keys()))])
	require.NoError(t, err)
	onFlushed := shardsOn(ctx, t, rdb, f, flushed)
	require.NoError(t, flushed.FlushAll(ctx).Err())
	p.waitSyncs(t, len(hs), false)
	put := p.finish()
	for range 3 {
		p.syncAll(ctx, t)
	}
	flush := p.summary(4)
	t.Logf("shards %v on the master flushed; through FLUSHALL, %v", onFlushed, flush)
	assert.Positive(t, flush.fullPushes, "no Hybrid rebuilt the shards flushed")
	assert.Equal(t, flush.fullPushes, flush.reasons["rebuild"], "full pushes for another reason")
	assert.LessOrEqual(t, flush.mostPulls, len(onFlushed), "a Sync read whole shards of another master")
	assert.Less(t, flush.mostFullSent, int64(2*len(onFlushed)+1)*shardBytes, "a Sync pushed more than the master's shards")

	again, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, n, 0.01, sharded)
	require.NoError(t, err)
	snap, err := again.Snapshot(ctx)
	require.NoError(t, err)
	want, err := bloom.New(funnel.String, n, 0.01)
	require.NoError(t, err)
	want.PutMany(put)
	// Redis may hold more than want: the values of Syncs that failed, and
	// those PutMany put.
	want.PutAll(snap)
	checkFleet(t, want, snap, hs, put)
	p.untyped.check(t)
}

// shardsOn returns the indexes of f's shards that master serves.
func shardsOn(ctx context.Context, t *testing.T, rdb *redis.ClusterClient, f *redisfilter.Filter[string], master *redis.Client) []int {
	t.Helper()
	var on []int
	for s, key := range f.Keys() {
		m, err := rdb.MasterForKey(ctx, key)
		require.NoError(t, err)
		if m.Options().Addr == master.Options().Addr {
			on = append(on, s)
		}
	}
	return on
}
