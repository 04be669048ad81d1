package redisfilter_test

import (
	"context"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// BenchmarkBigFilterStall measures, on a server of its own and on a cluster
// of its own (3 masters with a replica each), how long Redis is held while
// Snapshot, Merge and Open run on a filter of 1e8 values at p = 0.01
// (114 MiB), and Open creates one of 1e9 (1.1 GiB), in shards of 16 MiB
// and of 2 MiB: it reports the longest
// command that the SLOWLOG of any node saw (server-max-ms), and another
// client's PING latency to the first shard's master, maximum and 99th
// percentile, which include the client's own pauses. For Snapshot it also
// reports the most the Go heap held beyond what it held before, and what
// was allocated in all, as multiples of the filter's size.
func BenchmarkBigFilterStall(b *testing.B) {
	b.Run("single", func(b *testing.B) {
		srv := redistest.New(b)
		rdb := newClient(srv.Addr())
		b.Cleanup(func() { rdb.Close() })
		bigFilterStall(b, rdb, []*redis.Client{rdb}, newClient(srv.Addr()))
	})
	b.Run("cluster", func(b *testing.B) {
		cl := redistest.NewCluster(b, 3, 1)
		rdb := newClusterClient(cl.Addrs())
		b.Cleanup(func() { rdb.Close() })
		var nodes []*redis.Client
		for _, n := range cl.Nodes {
			c := newClient(n.Socket())
			b.Cleanup(func() { c.Close() })
			nodes = append(nodes, c)
		}
		master, err := rdb.MasterForKey(context.Background(), "{big}")
		require.NoError(b, err)
		bigFilterStall(b, rdb, nodes, newClient(master.Options().Addr))
	})
}

func bigFilterStall(b *testing.B, rdb redis.UniversalClient, nodes []*redis.Client, probe *redis.Client) {
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
	require.NoError(b, f.Merge(ctx, local))
	opener := func(n int64, opts ...redisfilter.Option) func() error {
		return func() error {
			g, err := redisfilter.Open(ctx, rdb, "big-open", funnel.Int64, n, 0.01, opts...)
			if err != nil {
				return err
			}
			return g.Delete(ctx)
		}
	}
	var heap heapPeak
	for _, op := range []struct {
		name string
		run  func() error
	}{
		{"Snapshot", func() error {
			heap.start()
			_, err := f.Snapshot(ctx)
			heap.stop()
			return err
		}},
		{"Merge", func() error { return f.Merge(ctx, local) }},
		{"Open", opener(n)},
		{"Open1e9", opener(1_000_000_000)},
		// Shards of 2 MiB, which a server allocates in an eighth of the
		// time: where first touching memory is slow, as in some VMs.
		{"Open1e9-2MiB", opener(1_000_000_000, redisfilter.WithShardBytes(2<<20))},
	} {
		b.Run(op.name, func(b *testing.B) {
			var (
				mu   sync.Mutex
				lats []time.Duration
				stop = make(chan struct{})
				wg   sync.WaitGroup
			)
			for _, node := range nodes {
				require.NoError(b, node.ConfigSet(ctx, "slowlog-log-slower-than", "1000").Err())
				require.NoError(b, node.ConfigSet(ctx, "slowlog-max-len", "100000").Err())
				require.NoError(b, node.SlowLogReset(ctx).Err())
			}
			heap = heapPeak{}
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
			var longest redis.SlowLog
			for _, node := range nodes {
				slow, err := node.SlowLogGet(ctx, -1).Result()
				require.NoError(b, err)
				for _, e := range slow {
					if e.Duration > longest.Duration {
						longest = e
					}
				}
			}
			if longest.Duration > 0 {
				args := longest.Args
				if len(args) > 4 {
					args = args[:4]
				}
				b.Logf("longest command: %v (%v)", args, longest.Duration)
			}
			b.ReportMetric(float64(longest.Duration.Microseconds())/1000, "server-max-ms")
			slices.Sort(lats)
			if len(lats) > 0 {
				b.ReportMetric(float64(lats[len(lats)-1].Microseconds())/1000, "ping-max-ms")
				b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds())/1000, "ping-p99-ms")
			}
			if heap.runs > 0 {
				size := float64(f.BitSize() / 8)
				b.ReportMetric(float64(heap.peak)/size, "heap-peak/filter")
				b.ReportMetric(float64(heap.allocated)/size/float64(heap.runs), "allocated/filter")
			}
		})
	}
}

// A heapPeak samples the Go heap every millisecond between start and stop:
// the most it held beyond what it held at start, and what was allocated.
type heapPeak struct {
	peak, allocated uint64
	runs            int
	done            chan struct{}
	wg              sync.WaitGroup
	base, allocs0   uint64
}

var heapSamples = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/allocs:bytes"}}

func readHeap() (live, allocated uint64) {
	s := slices.Clone(heapSamples)
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

func (h *heapPeak) start() {
	runtime.GC()
	h.base, h.allocs0 = readHeap()
	h.done = make(chan struct{})
	h.wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			live, _ := readHeap()
			if live > h.base {
				h.peak = max(h.peak, live-h.base)
			}
			select {
			case <-h.done:
				return
			case <-t.C:
			}
		}
	})
}

func (h *heapPeak) stop() {
	close(h.done)
	h.wg.Wait()
	_, allocs := readHeap()
	h.allocated += allocs - h.allocs0
	h.runs++
}
