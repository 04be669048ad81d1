package bloomprom_test

import (
	"context"
	"math"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloomprom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// startRedis starts a throwaway redis-server on a unix socket, with
// nothing on disk, which is stopped however t ends, and returns it with a
// client of it. Without redis-server it skips t, or fails it in CI.
func startRedis(t *testing.T) (*redistest.Server, *redis.Client) {
	t.Helper()
	srv := redistest.New(t)
	rdb := redis.NewClient(&redis.Options{
		Network: "unix", Addr: srv.Socket(),
		// So that the collector's deadline bounds a read, and nothing
		// else: a scrape that outlived it would never end.
		ContextTimeoutEnabled: true,
		ReadTimeout:           -1,
		WriteTimeout:          -1,
		MaxRetries:            -1,
	})
	t.Cleanup(func() { rdb.Close() })
	return srv, rdb
}

// gatherReturns gathers c's metrics as gather does, and fails t if that
// has not returned in a minute: a scrape that ignored its timeout would
// hang, and a minute is longer than any busy machine delays one.
func gatherReturns(t *testing.T, c prometheus.Collector) samples {
	t.Helper()
	s, err := redistest.Returns(t, time.Minute, func() (samples, error) { return gatherOnce(c) })
	require.NoError(t, err)
	return s
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestRedisFilter requires the metrics of a filter in Redis to be its
// statistics, counted in Redis.
func TestRedisFilter(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, "shared", funnel.Int64, 10_000, 0.01)
	require.NoError(t, err)
	values := make([]int64, 3000)
	for i := range values {
		values[i] = int64(i)
	}
	require.NoError(t, f.PutMany(ctx, values))

	c := bloomprom.NewCollector()
	require.NoError(t, c.Register("shared", f, bloomprom.WithSizing(10_000, 0.01)))
	lint(t, c)
	s := gather(t, c)
	count, err := f.BitCount(ctx)
	require.NoError(t, err)
	fpp, err := f.ExpectedFPP(ctx)
	require.NoError(t, err)
	elements, err := f.ApproximateElementCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1.0, s.get(t, "mitzbloom_filter_up", "shared"))
	assert.Equal(t, float64(f.BitSize()), s.get(t, "mitzbloom_filter_bitsize", "shared"))
	assert.Equal(t, float64(count), s.get(t, "mitzbloom_filter_bitcount", "shared"))
	assert.Equal(t, fpp, s.get(t, "mitzbloom_filter_expected_fpp", "shared"))
	assert.Equal(t, float64(elements), s.get(t, "mitzbloom_filter_approximate_elements", "shared"))
	assert.Equal(t, float64(elements)/10_000, s.get(t, "mitzbloom_filter_load_ratio", "shared"))
	assert.Equal(t, 0.01, s.get(t, "mitzbloom_filter_target_fpp", "shared"))
	for _, cause := range []string{"lost", "unavailable", "deadline_exceeded", "other"} {
		assert.Zero(t, s.get(t, "mitzbloom_filter_read_failures_total", "shared", "error", cause), cause)
	}

	// A filter deleted under it: lost, said so, and the scrape goes on.
	require.NoError(t, f.Delete(ctx))
	s = gather(t, c)
	assert.Zero(t, s.get(t, "mitzbloom_filter_up", "shared"))
	assert.Equal(t, 1.0, s.get(t, "mitzbloom_filter_read_failures_total", "shared", "error", "lost"))
	_, ok := s.of("mitzbloom_filter_bitcount", "shared")
	assert.False(t, ok, "no statistics of a filter that could not be read")
}

// TestWindowed requires the metrics of a Windowed to be its statistics
// over the generations it looks in, with its period.
func TestWindowed(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := testContext(t)
	const gens = 3
	w, err := redisfilter.OpenWindowed(ctx, rdb, "window", funnel.Int64, 5000, 0.01, time.Hour, gens)
	require.NoError(t, err)
	values := make([]int64, 2000)
	for i := range values {
		values[i] = int64(i)
	}
	require.NoError(t, w.PutMany(ctx, values))

	c := bloomprom.NewCollector()
	require.NoError(t, c.Register("window", w, bloomprom.WithSizing(5000, 0.01)))
	lint(t, c)
	before := time.Now()
	s := gather(t, c)
	count, err := w.BitCount(ctx)
	require.NoError(t, err)
	fpp, err := w.ExpectedFPP(ctx)
	require.NoError(t, err)
	elements, err := w.ApproximateElementCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1.0, s.get(t, "mitzbloom_filter_up", "window"))
	assert.Equal(t, float64((gens+1)*w.BitSize()), s.get(t, "mitzbloom_filter_bitsize", "window"))
	assert.Equal(t, float64(count), s.get(t, "mitzbloom_filter_bitcount", "window"))
	assert.Equal(t, fpp, s.get(t, "mitzbloom_filter_expected_fpp", "window"))
	assert.Equal(t, float64(elements), s.get(t, "mitzbloom_filter_approximate_elements", "window"))
	assert.Equal(t, float64(gens*5000), s.get(t, "mitzbloom_filter_expected_insertions", "window"))
	assert.InDelta(t, 1-math.Pow(0.99, gens), s.get(t, "mitzbloom_filter_target_fpp", "window"), 1e-15)
	assert.Equal(t, 3600.0, s.get(t, "mitzbloom_filter_generation_period_seconds", "window"))
	start := time.UnixMilli(w.Generation(before) * time.Hour.Milliseconds())
	age := s.get(t, "mitzbloom_filter_generation_age_seconds", "window")
	assert.GreaterOrEqual(t, age, before.Sub(start).Seconds())
	assert.Less(t, age, 3600.0)
}

// TestHybrid requires the metrics of a Hybrid to be those of its local
// filter, and the counts of the Syncs since it was registered, each
// failure under its cause.
func TestHybrid(t *testing.T) {
	srv, rdb := startRedis(t)
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, "fleet", funnel.String, 10_000, 0.01)
	require.NoError(t, err)
	h, err := redisfilter.NewHybrid(ctx, f)
	require.NoError(t, err)
	c := bloomprom.NewCollector()
	require.NoError(t, c.Register("fleet", h, bloomprom.WithSizing(10_000, 0.01)))

	for i := range 500 {
		h.Put(strconv.Itoa(i))
	}
	require.NoError(t, h.Sync(ctx))
	require.NoError(t, h.Sync(ctx))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, h.Sync(cancelled), context.Canceled)

	lint(t, c)
	s := gather(t, c)
	st := h.Stats()
	assert.Equal(t, 3.0, s.get(t, "mitzbloom_hybrid_syncs_total", "fleet"))
	assert.Equal(t, float64(st.Sent), s.get(t, "mitzbloom_hybrid_sent_bytes_total", "fleet"))
	assert.Equal(t, float64(st.Received), s.get(t, "mitzbloom_hybrid_received_bytes_total", "fleet"))
	assert.Positive(t, st.Sent)
	assert.Equal(t, float64(st.FullPushes), s.get(t, "mitzbloom_hybrid_full_pushes_total", "fleet"))
	assert.Equal(t, float64(st.FullPulls), s.get(t, "mitzbloom_hybrid_whole_shard_pulls_total", "fleet"))
	assert.Equal(t, 1.0, s.get(t, "mitzbloom_hybrid_sync_failures_total", "fleet", "error", "canceled"))
	assert.Zero(t, s.get(t, "mitzbloom_hybrid_sync_failures_total", "fleet", "error", "other"))
	age := s.get(t, "mitzbloom_hybrid_last_sync_age_seconds", "fleet")
	assert.Positive(t, age)
	assert.LessOrEqual(t, age, time.Since(h.LastSync()).Seconds())
	local := h.Copy()
	assert.Equal(t, float64(local.BitCount()), s.get(t, "mitzbloom_filter_bitcount", "fleet"))
	assert.Equal(t, local.ExpectedFPP(), s.get(t, "mitzbloom_filter_expected_fpp", "fleet"))
	assert.Equal(t, float64(local.ApproximateElementCount()), s.get(t, "mitzbloom_filter_approximate_elements", "fleet"))
	assert.Equal(t, 1.0, s.get(t, "mitzbloom_filter_up", "fleet"), "a Hybrid's statistics are local")

	// With the server gone, Syncs fail and the local filter goes stale,
	// and the scrape says so.
	srv.Halt(syscall.SIGKILL)
	for range 2 {
		sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		assert.Error(t, h.Sync(sctx))
		cancel()
	}
	s = gather(t, c)
	assert.Equal(t, 5.0, s.get(t, "mitzbloom_hybrid_syncs_total", "fleet"))
	var failures float64
	for key, v := range s {
		if len(key) > 36 && key[:36] == "mitzbloom_hybrid_sync_failures_total" {
			failures += v
		}
	}
	assert.Equal(t, 3.0, failures, "every failure counts under one cause")
	assert.Greater(t, s.get(t, "mitzbloom_hybrid_last_sync_age_seconds", "fleet"), age)
	assert.Equal(t, 1.0, s.get(t, "mitzbloom_filter_up", "fleet"))

	// Unregistered, its Syncs are not counted; registered again, they
	// count from 0.
	require.True(t, c.Unregister("fleet"))
	sctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	h.Sync(sctx)
	cancel()
	require.NoError(t, c.Register("fleet", h))
	assert.Zero(t, gather(t, c).get(t, "mitzbloom_hybrid_syncs_total", "fleet"))
}

// TestRedisUnreachable stops the server, so that it takes connections and
// answers nothing, and then kills it: each scrape must return, at the
// filters' timeout since their client would wait for ever, report them
// down, by cause, and report the filters in memory as ever.
func TestRedisUnreachable(t *testing.T) {
	srv, rdb := startRedis(t)
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, "shared", funnel.Int64, 1000, 0.01)
	require.NoError(t, err)
	w, err := redisfilter.OpenWindowed(ctx, rdb, "window", funnel.Int64, 1000, 0.01, time.Minute, 2)
	require.NoError(t, err)
	local, err := bloom.New(funnel.Int64, 1000, 0.01)
	require.NoError(t, err)

	const timeout = 300 * time.Millisecond
	c := bloomprom.NewCollector()
	require.NoError(t, c.Register("shared", f, bloomprom.WithTimeout(timeout)))
	require.NoError(t, c.Register("window", w, bloomprom.WithTimeout(timeout)))
	require.NoError(t, c.Register("local", local))
	assert.Equal(t, 1.0, gather(t, c).get(t, "mitzbloom_filter_up", "shared"))

	for _, fault := range []struct {
		name  string
		do    func()
		cause string // "" if several may do
	}{
		{"stopped", func() { require.NoError(t, srv.Signal(syscall.SIGSTOP)) }, "unavailable"},
		{"killed", func() { srv.Halt(syscall.SIGKILL) }, "unavailable"},
	} {
		fault.do()
		for scrape := range 2 {
			start := time.Now()
			s := gatherReturns(t, c)
			t.Logf("%s, scrape %d: %v", fault.name, scrape, time.Since(start).Round(time.Millisecond))
			for _, name := range []string{"shared", "window"} {
				assert.Zero(t, s.get(t, "mitzbloom_filter_up", name), "%s: %s", fault.name, name)
				if fault.cause != "" {
					assert.Positive(t, s.get(t, "mitzbloom_filter_read_failures_total", name, "error", fault.cause), "%s: %s", fault.name, name)
				}
				_, ok := s.of("mitzbloom_filter_expected_fpp", name)
				assert.False(t, ok, "%s: %s has statistics it could not read", fault.name, name)
			}
			assert.Equal(t, 1.0, s.get(t, "mitzbloom_filter_up", "local"))
			assert.Equal(t, local.ExpectedFPP(), s.get(t, "mitzbloom_filter_expected_fpp", "local"))
		}
	}
	s := gather(t, c)
	var failures float64
	for key, v := range s {
		if len(key) > 37 && key[:37] == "mitzbloom_filter_read_failures_total{" {
			failures += v
			if v > 0 {
				t.Logf("%s %v", key, v)
			}
		}
	}
	// 5 scrapes that failed, 2 filters each.
	assert.Equal(t, 10.0, failures)
}
