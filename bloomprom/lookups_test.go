package bloomprom_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloomprom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// TestLookups has many goroutines look up through one Lookups, one at a
// time and in batches: its counts must be exactly the answers the filter
// gives, and the collector must report them.
func TestLookups(t *testing.T) {
	const goroutines, perGoroutine = 8, 20_000
	f, err := bloom.New(funnel.Int64, 10_000, 0.05)
	require.NoError(t, err)
	for i := range int64(10_000) {
		f.Put(i)
	}
	// Each goroutine looks up [g·perGoroutine, (g+1)·perGoroutine): the
	// first values are in the filter, the others mostly not.
	var wantMaybe int64
	for i := range int64(goroutines * perGoroutine) {
		if f.MightContain(i) {
			wantMaybe++
		}
	}
	wantNo := goroutines*perGoroutine - wantMaybe
	require.Greater(t, wantMaybe, int64(10_000), "false positives too")

	l := bloomprom.CountLookups(f)
	var wg sync.WaitGroup
	for g := range int64(goroutines) {
		wg.Go(func() {
			from := g * perGoroutine
			if g%2 == 0 {
				for i := from; i < from+perGoroutine; i++ {
					assert.Equal(t, f.MightContain(i), l.MightContain(i))
				}
				return
			}
			batch := make([]int64, 0, 100)
			var answers []bool
			for i := from; i < from+perGoroutine; i++ {
				batch = append(batch, i)
				if len(batch) == cap(batch) {
					answers = l.MightContainMany(answers[:0], batch)
					assert.Equal(t, f.MightContainMany(nil, batch), answers)
					batch = batch[:0]
				}
			}
		})
	}
	wg.Wait()
	maybe, no := l.Counts()
	assert.Equal(t, wantMaybe, maybe)
	assert.Equal(t, wantNo, no)

	c := bloomprom.NewCollector()
	require.NoError(t, c.Register("counted", l))
	s := gather(t, c)
	assert.Equal(t, float64(wantMaybe), s.get(t, "mitzbloom_filter_lookups_total", "counted", "result", "maybe"))
	assert.Equal(t, float64(wantNo), s.get(t, "mitzbloom_filter_lookups_total", "counted", "result", "no"))
	assert.Equal(t, float64(f.BitCount()), s.get(t, "mitzbloom_filter_bitcount", "counted"), "the filter inside is reported")
}

// TestLookupsMany requires MightContainMany to append to dst as the
// filter's does, and to count only what it appended.
func TestLookupsMany(t *testing.T) {
	r, err := bloom.NewRotating(funnel.String, 100, 0.01, 1<<40)
	require.NoError(t, err)
	r.Put("a")
	l := bloomprom.CountLookups(r)
	got := l.MightContainMany([]bool{false, true}, []string{"a", "b", "a"})
	assert.Equal(t, []bool{false, true, true, false, true}, got)
	maybe, no := l.Counts()
	assert.EqualValues(t, 2, maybe)
	assert.EqualValues(t, 1, no)
}

// TestLookupsZeroAllocs requires counting to allocate nothing: a Lookups'
// MightContain allocates what the filter's does, nothing with the
// built-in funnels.
func TestLookupsZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates of its own, so allocation counts mean nothing; .ci/run also runs the tests without -race")
	}
	f, err := bloom.New(funnel.Int64, 1000, 0.01)
	require.NoError(t, err)
	l := bloomprom.CountLookups(f)
	var i int64
	assert.Zero(t, testing.AllocsPerRun(1000, func() { l.MightContain(i); i++ }))
	dst := make([]bool, 0, 10)
	vs := make([]int64, 10)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { dst = l.MightContainMany(dst[:0], vs) }))
}

// sharedCount is the obvious way to count, for BenchmarkLookups: one pair
// of counters that every goroutine adds to, whose cache line thus moves
// from core to core on every lookup.
type sharedCount struct {
	f         *bloom.Filter[int64]
	maybe, no atomic.Int64
}

func (s *sharedCount) MightContain(v int64) bool {
	found := s.f.MightContain(v)
	if found {
		s.maybe.Add(1)
	} else {
		s.no.Add(1)
	}
	return found
}

// BenchmarkLookups times MightContain of a filter of 10,000 values that
// fits in the caches, where counting weighs most, from all processors at
// once: the filter's own, through a Lookups, and through one pair of
// shared counters. Run with -cpu 1,2 (and more where there are more
// cores): the Lookups' time a lookup falls as the filter's does, the
// shared counters' does not.
func BenchmarkLookups(b *testing.B) {
	f, err := bloom.New(funnel.Int64, 10_000, 0.01)
	require.NoError(b, err)
	for i := range int64(10_000) {
		f.Put(i * 2)
	}
	l := bloomprom.CountLookups(f)
	shared := &sharedCount{f: f}
	for _, bc := range []struct {
		name string
		fn   func(int64) bool
	}{{"count=none", f.MightContain}, {"count=lookups", l.MightContain}, {"count=shared", shared.MightContain}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var i, found int64
				for pb.Next() {
					if bc.fn(i & 0x3fff) {
						found++
					}
					i++
				}
				sinkFound.Add(found)
			})
		})
	}
}

// sinkFound keeps the lookups from being optimized away.
var sinkFound atomic.Int64
