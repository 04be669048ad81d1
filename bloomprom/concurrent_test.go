package bloomprom_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloomprom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// TestConcurrent registers and unregisters filters of every kind in
// memory while scrapes run, from several goroutines each, and while other
// goroutines put and look up, for some rounds of registrations and some
// scrapes at least: every scrape must succeed and report each filter it has
// whole, and the collector must end with none. Run it with -race.
func TestConcurrent(t *testing.T) {
	rounds, minScrapes := int64(40), int64(200)
	if testing.Short() {
		rounds, minScrapes = 10, 50
	}
	const names = 6
	f, err := bloom.New(funnel.Int64, 10_000, 0.01)
	require.NoError(t, err)
	r, err := bloom.NewRotating(funnel.Int64, 10_000, 0.01, time.Millisecond)
	require.NoError(t, err)
	sc, err := bloom.NewScalable(funnel.Int64, 10_000, 0.01)
	require.NoError(t, err)
	l := bloomprom.CountLookups(r)
	filters := []any{f, r, sc, l}

	c := bloomprom.NewCollector()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))

	var wg sync.WaitGroup
	var done atomic.Bool
	// Writers and readers of the filters, as a service runs them.
	for w := range 2 {
		wg.Go(func() {
			for i := int64(w); !done.Load(); i += 2 {
				f.Put(i)
				r.Put(i)
				sc.Put(i % 50_000)
				l.MightContain(i)
			}
		})
	}
	// Registrations: each goroutine owns some names, and registers and
	// unregisters them in turn, with a filter of each kind.
	var registrars sync.WaitGroup
	var scrapes atomic.Int64
	for g := range 2 {
		registrars.Go(func() {
			for round := 0; int64(round) < rounds || scrapes.Load() < minScrapes; round++ {
				for n := g; n < names; n += 2 {
					name := fmt.Sprint("f", n)
					if !assert.NoError(t, c.Register(name, filters[(n+round)%len(filters)], bloomprom.WithSizing(10_000, 0.01))) {
						return
					}
				}
				for n := g; n < names; n += 2 {
					assert.True(t, c.Unregister(fmt.Sprint("f", n)))
				}
			}
		})
	}
	for range 3 {
		wg.Go(func() {
			for !done.Load() {
				mfs, err := reg.Gather()
				if !assert.NoError(t, err) {
					return
				}
				s := samplesOf(mfs)
				for key := range s {
					if name, ok := strings.CutPrefix(key, `mitzbloom_filter_up{filter="`); ok {
						name = strings.TrimSuffix(name, `"}`)
						for _, metric := range []string{"mitzbloom_filter_bitsize", "mitzbloom_filter_expected_fpp", "mitzbloom_filter_target_fpp"} {
							_, ok := s.of(metric, name)
							assert.True(t, ok, "filter %s lacks %s", name, metric)
						}
					}
				}
				scrapes.Add(1)
			}
		})
	}
	registrars.Wait()
	done.Store(true)
	wg.Wait()
	t.Logf("%d scrapes beside %d rounds of registrations", scrapes.Load(), rounds)
	assert.Positive(t, scrapes.Load())
	mfs, err := reg.Gather()
	require.NoError(t, err)
	assert.Empty(t, mfs, "every filter was unregistered")
}
