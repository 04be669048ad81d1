package redisfilter_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/stretchr/testify/require"
)

// BenchmarkBigFilterStall measures how long another client's PING waits
// while Snapshot, Merge and Open run on a filter of 1e8 values at p = 0.01
// (114 MiB), on a server of its own: it reports the probe's maximum and
// 99th percentile latency, and the longest command the server's SLOWLOG
// saw (server-max-ms): the probe's numbers include the client's own pauses.
func BenchmarkBigFilterStall(b *testing.B) {
	requireRedisServer(b)
	srv, err := startRedis(false)
	require.NoError(b, err)
	b.Cleanup(srv.stop)
	rdb := newClient(srv.addr())
	b.Cleanup(func() { rdb.Close() })
	probe := newClient(srv.addr())
	b.Cleanup(func() { probe.Close() })
	ctx := context.Background()
	const n = 100_000_000
	start := time.Now()
	f, err := redisfilter.Open(ctx, rdb, "big", funnel.Int64, n, 0.01)
	require.NoError(b, err)
	b.Logf("Open of %d MiB: %v", f.BitSize()/8>>20, time.Since(start))
	local, err := bloom.New(funnel.Int64, n, 0.01)
	require.NoError(b, err)
	for i := range int64(1_000_000) {
		local.Put(i)
	}
	for _, op := range []struct {
		name string
		run  func() error
	}{
		{"Snapshot", func() error { _, err := f.Snapshot(ctx); return err }},
		{"Merge", func() error { return f.Merge(ctx, local) }},
		{"Open", func() error {
			// Creating a filter of the same size, in shards of 16 MiB.
			g, err := redisfilter.Open(ctx, rdb, "big-open", funnel.Int64, n, 0.01)
			if err != nil {
				return err
			}
			return g.Delete(ctx)
		}},
	} {
		b.Run(op.name, func(b *testing.B) {
			var (
				mu   sync.Mutex
				lats []time.Duration
				stop = make(chan struct{})
				wg   sync.WaitGroup
			)
			require.NoError(b, rdb.ConfigSet(ctx, "slowlog-log-slower-than", "1000").Err())
			require.NoError(b, rdb.ConfigSet(ctx, "slowlog-max-len", "100000").Err())
			require.NoError(b, rdb.SlowLogReset(ctx).Err())
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					t0 := time.Now()
					if err := probe.Ping(ctx).Err(); err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					lats = append(lats, time.Since(t0))
					mu.Unlock()
				}
			})
			for b.Loop() {
				if err := op.run(); err != nil {
					b.Fatal(err)
				}
			}
			close(stop)
			wg.Wait()
			slow, err := rdb.SlowLogGet(ctx, -1).Result()
			require.NoError(b, err)
			var longest time.Duration
			for _, e := range slow {
				longest = max(longest, e.Duration)
			}
			b.ReportMetric(float64(longest.Microseconds())/1000, "server-max-ms")
			slices.Sort(lats)
			if len(lats) > 0 {
				b.ReportMetric(float64(lats[len(lats)-1].Microseconds())/1000, "ping-max-ms")
				b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds())/1000, "ping-p99-ms")
			}
		})
	}
}
