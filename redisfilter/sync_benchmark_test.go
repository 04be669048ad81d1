package redisfilter_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// BenchmarkHybridSync measures, on a server of its own and with the
// server's own counters, what one Hybrid's Sync moves (INFO stats
// total_net_input_bytes and total_net_output_bytes: "bytes/sync") and
// costs the server (its main thread's CPU: "server-µs/sync"), for a filter
// of 1e8 values at p = 0.01 (114 MiB, 8 shards), after n new values were
// put since its last Sync: by another Hybrid of the fleet ("fleet"), or by
// itself ("local"). "full" is a Sync whose cursors the logs no longer
// cover, which reads every shard whole; "before" is the Sync of the
// releases without change logs, which pushed the whole local filter and
// read the whole shared one (a Merge and a Snapshot), in the same run.
func BenchmarkHybridSync(b *testing.B) {
	rdb := newClient(redistest.New(b).Addr())
	b.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	const n = 100_000_000
	open := func() *redisfilter.Filter[int64] {
		f, err := redisfilter.Open(ctx, rdb, "fleet", funnel.Int64, n, 0.01)
		require.NoError(b, err)
		return f
	}
	f := open()
	// A filter with some values, so that every chunk has bits.
	var next int64
	values := func(m int) []int64 {
		vs := make([]int64, m)
		for i := range vs {
			next++
			vs[i] = next
		}
		return vs
	}
	require.NoError(b, f.PutMany(ctx, values(1_000_000)))
	measured, err := redisfilter.NewHybrid(ctx, open())
	require.NoError(b, err)
	fleet, err := redisfilter.NewHybrid(ctx, open())
	require.NoError(b, err)
	require.NoError(b, measured.Sync(ctx))

	counters := func() (bytes, usec float64) {
		info, err := rdb.Info(ctx, "stats").Result()
		require.NoError(b, err)
		for line := range strings.Lines(info) {
			name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if ok && (name == "total_net_input_bytes" || name == "total_net_output_bytes") {
				x, _ := strconv.ParseFloat(v, 64)
				bytes += x
			}
		}
		return bytes, serverUsec(b, rdb)
	}
	measure := func(b *testing.B, prepare func(), sync func() error) {
		var bytes, usec float64
		for b.Loop() {
			b.StopTimer()
			prepare()
			b0, u0 := counters()
			b.StartTimer()
			require.NoError(b, sync())
			b.StopTimer()
			b1, u1 := counters()
			b.StartTimer()
			// The INFO of the second reading is in it: about 1,300 bytes
			// out and 60 in, which the first reading's reply is not.
			bytes += b1 - b0
			usec += u1 - u0
		}
		b.ReportMetric(bytes/float64(b.N), "bytes/sync")
		b.ReportMetric(usec/float64(b.N), "server-µs/sync")
		st := measured.Stats().Last
		b.Logf("%v", st)
	}
	for _, m := range []int{0, 10, 1000, 100_000} {
		b.Run(fmt.Sprintf("fleet/values=%d", m), func(b *testing.B) {
			measure(b, func() {
				fleet.PutMany(values(m))
				require.NoError(b, fleet.Sync(ctx))
			}, func() error { return measured.Sync(ctx) })
		})
		b.Run(fmt.Sprintf("local/values=%d", m), func(b *testing.B) {
			measure(b, func() { measured.PutMany(values(m)) }, func() error { return measured.Sync(ctx) })
		})
	}
	b.Run("full", func(b *testing.B) {
		epoch := 0
		measure(b, func() {
			// Start every shard's log again, in an epoch of its own, as
			// a Merge of many bits does.
			epoch++
			for _, key := range f.Keys() {
				require.NoError(b, rdb.Set(ctx, key+":changes", fmt.Sprintf("mitzbloom/changes %015d %016d\n", epoch, 0), 0).Err())
			}
		}, func() error { return measured.Sync(ctx) })
	})
	b.Run("before", func(b *testing.B) {
		local := measured.Copy()
		measure(b, func() {}, func() error {
			if err := f.Merge(ctx, local); err != nil {
				return err
			}
			_, err := f.Snapshot(ctx)
			return err
		})
	})
}
