package bloomprom

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/prometheus/client_golang/prometheus"
)

// A Collector is a [prometheus.Collector] of the statistics of the filters
// registered with it, each under a name. Register it with a
// prometheus.Registerer; filters can be registered and unregistered at any
// time, before or after. The zero Collector is ready to use, and so is the
// one [NewCollector] returns.
//
// A Collector is safe for concurrent use by multiple goroutines: filters
// may be registered and unregistered while scrapes run, and scrapes run
// concurrently. A scrape takes no lock: it reads the list of filters with
// one atomic load, and Register and Unregister replace the list.
type Collector struct {
	mu      sync.Mutex // serializes Register and Unregister
	entries atomic.Pointer[[]*entry]
}

// An entry is a filter registered under a name.
type entry struct {
	name    string
	labels  []string // {name}, the label values of most of its samples
	kind    kind
	filter  any // read through the interface of kind
	n       int64
	p       float64
	timeout time.Duration

	syncs     *syncCounts // a Hybrid's, nil for the others
	stopSyncs func()      // stops counting a Hybrid's Syncs
	lookups   *stripes    // the counts of a Lookups, nil if not wrapped
	// failures counts the reads from Redis that failed, by cause; nil for
	// a filter in memory, whose reads do not fail.
	failures     []atomic.Int64
	causeLabels  [][]string // {name, cause}, as causeLabels returns them
	lookupLabels [2][]string
}

// NewCollector returns a Collector of no filters.
func NewCollector() *Collector { return new(Collector) }

// list returns the registered filters, sorted by name; it takes no lock.
func (c *Collector) list() []*entry {
	if l := c.entries.Load(); l != nil {
		return *l
	}
	return nil
}

// Register makes c report the statistics of filter under name, the value
// of the label filter of its metrics, until [Collector.Unregister]. filter
// is one of
//
//   - a *[bloom.Filter], or any filter in memory with its BitSize,
//     BitCount and NumHashFunctions;
//   - a *[bloom.Rotating] or *[bloom.Scalable];
//   - a *[redisfilter.Filter] or *[redisfilter.Windowed], whose statistics
//     a scrape counts in Redis within the timeout of [WithTimeout];
//   - a *[redisfilter.Hybrid], whose statistics are those of its local
//     filter, and whose Syncs c counts, from now on, through
//     [redisfilter.Hybrid.AfterSync];
//   - a *[Lookups] wrapped around any of those in memory, which adds the
//     counts of its lookups' answers.
//
// Give the sizing of a filter that does not report its own with
// [WithSizing]. Register returns an error wrapping
// [bloom.ErrInvalidArgument] if name is empty, not valid UTF-8 or already
// registered, if filter is none of the above, or if an option is invalid
// or contradicts the filter.
func (c *Collector) Register(name string, filter any, opts ...Option) error {
	if name == "" || !utf8.ValidString(name) {
		return fmt.Errorf("%w: bloomprom: filter name %q must be valid UTF-8 and not empty", bloom.ErrInvalidArgument, name)
	}
	s := settings{timeout: defaultTimeout}
	for _, o := range opts {
		if err := o(&s); err != nil {
			return err
		}
	}
	e := &entry{name: name, labels: []string{name}, filter: filter, n: s.n, p: s.p, timeout: s.timeout}
	if l, ok := filter.(lookupCounter); ok {
		e.lookups, e.filter = l.counts(), l.unwrap()
		e.lookupLabels = [2][]string{{name, "maybe"}, {name, "no"}}
	}
	if err := e.classify(); err != nil {
		return fmt.Errorf("%w: bloomprom: Register(%q): %w", bloom.ErrInvalidArgument, name, err)
	}
	if e.kind.needsRedis() {
		e.failures = make([]atomic.Int64, len(causes)+1)
	}
	if e.kind.needsRedis() || e.kind == kindHybrid {
		e.causeLabels = causeLabels(name)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.list()
	if slices.ContainsFunc(old, func(o *entry) bool { return o.name == name }) {
		return fmt.Errorf("%w: bloomprom: a filter named %q is already registered", bloom.ErrInvalidArgument, name)
	}
	if e.kind == kindHybrid {
		e.syncs = newSyncCounts()
		e.stopSyncs = e.filter.(hybrid).AfterSync(e.syncs.add)
	}
	list := append(slices.Clip(old), e)
	slices.SortFunc(list, func(a, b *entry) int { return strings.Compare(a.name, b.name) })
	c.entries.Store(&list)
	return nil
}

// classify sets e's kind from the methods of its filter, and checks its
// sizing against the one the filter reports.
func (e *entry) classify() error {
	if v := reflect.ValueOf(e.filter); e.filter == nil || v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("filter is nil")
	}
	switch f := e.filter.(type) {
	case hybrid:
		e.kind = kindHybrid
	case windowed:
		e.kind = kindWindowed
	case remote:
		e.kind = kindRemote
	case rotating:
		e.kind = kindRotating
		if st := f.Stats(); st.ExpectedInsertions > 0 && e.n > 0 && (st.ExpectedInsertions != e.n || st.FPP != e.p) {
			return fmt.Errorf("the Rotating was made for n = %d at p = %g, not the WithSizing(%d, %g) given", st.ExpectedInsertions, st.FPP, e.n, e.p)
		}
	case scalable:
		e.kind = kindScalable
		if st := f.Stats(); st.FPP > 0 && e.n > 0 && (st.Stages[0].ExpectedInsertions != e.n || st.FPP != e.p) {
			return fmt.Errorf("the Scalable was made for n = %d at p = %g, not the WithSizing(%d, %g) given", st.Stages[0].ExpectedInsertions, st.FPP, e.n, e.p)
		}
	case inMemory:
		e.kind = kindFilter
	default:
		return fmt.Errorf("%T is not a filter of package bloom or redisfilter", f)
	}
	if e.lookups != nil && e.kind.needsRedis() {
		return fmt.Errorf("a Lookups wraps a filter in memory, not %T", e.filter)
	}
	return nil
}

// Unregister stops c from reporting the filter registered under name, and
// from counting its Syncs if it is a Hybrid, and reports whether there was
// one.
func (c *Collector) Unregister(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.list()
	i := slices.IndexFunc(old, func(e *entry) bool { return e.name == name })
	if i < 0 {
		return false
	}
	if stop := old[i].stopSyncs; stop != nil {
		stop()
	}
	list := slices.Delete(slices.Clone(old), i, i+1)
	c.entries.Store(&list)
	return true
}

// Describe sends the descriptions of every metric c may report, whatever
// filters it has, so that a registry checks them once.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descs {
		ch <- d
	}
}

// Collect sends the metrics of every registered filter. It reads the
// filters in Redis concurrently, each within its timeout, while it reads
// those in memory.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	entries := c.list()
	wait := collectRemote(entries, ch)
	for _, e := range entries {
		if !e.kind.needsRedis() {
			e.collect(context.Background(), ch)
		}
	}
	wait()
}

// collectRemote starts a goroutine for each filter of entries in Redis
// that sends its metrics, and returns the function that waits for them
// all. Without such filters it allocates nothing.
func collectRemote(entries []*entry, ch chan<- prometheus.Metric) (wait func()) {
	if !slices.ContainsFunc(entries, func(e *entry) bool { return e.kind.needsRedis() }) {
		return func() {}
	}
	var wg sync.WaitGroup
	for _, e := range entries {
		if e.kind.needsRedis() {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
				defer cancel()
				e.collect(ctx, ch)
			})
		}
	}
	return wg.Wait
}

// collect sends e's metrics.
func (e *entry) collect(ctx context.Context, ch chan<- prometheus.Metric) {
	start := time.Now()
	s, err := e.read(ctx)
	e.gauge(ch, readDurationDesc, time.Since(start).Seconds())
	if err != nil {
		e.failures[causeOf(err)].Add(1)
	}
	if e.failures != nil {
		for i := range e.failures {
			ch <- prometheus.MustNewConstMetric(readFailuresDesc, prometheus.CounterValue, float64(e.failures[i].Load()), e.causeLabels[i]...)
		}
	}
	if e.syncs != nil {
		e.collectSyncs(ch, s.lastSync)
	}
	if l := e.lookups; l != nil {
		maybe, no := l.sum()
		ch <- prometheus.MustNewConstMetric(lookupsDesc, prometheus.CounterValue, float64(maybe), e.lookupLabels[0]...)
		ch <- prometheus.MustNewConstMetric(lookupsDesc, prometheus.CounterValue, float64(no), e.lookupLabels[1]...)
	}
	if err != nil {
		e.gauge(ch, upDesc, 0)
		return
	}
	e.gauge(ch, upDesc, 1)

	e.gauge(ch, bitSizeDesc, float64(s.bitSize))
	e.gauge(ch, bitCountDesc, float64(s.bitCount))
	e.gauge(ch, fillRatioDesc, float64(s.bitCount)/float64(s.bitSize))
	e.gauge(ch, elementsDesc, elementsValue(s.elements))
	e.gauge(ch, expectedFPPDesc, s.fpp)
	if s.expected > 0 {
		e.gauge(ch, expectedInsertionsDesc, float64(s.expected))
		e.gauge(ch, loadRatioDesc, elementsValue(s.elements)/float64(s.expected))
	}
	if s.target > 0 {
		e.gauge(ch, targetFPPDesc, s.target)
	}
	switch e.kind {
	case kindRotating:
		e.counter(ch, rotationsDesc, float64(s.rotations))
		e.counter(ch, earlyRotationsDesc, float64(s.early))
		fallthrough
	case kindWindowed:
		e.gauge(ch, generationAgeDesc, s.age.Seconds())
		if s.period > 0 {
			e.gauge(ch, generationPeriodDesc, s.period.Seconds())
		}
	case kindScalable:
		e.gauge(ch, stagesDesc, float64(s.stages))
	}
}

// collectSyncs sends the counts of a Hybrid's Syncs, and the age of the
// last successful one.
func (e *entry) collectSyncs(ch chan<- prometheus.Metric, lastSync time.Duration) {
	c := e.syncs
	e.counter(ch, syncsDesc, float64(c.syncs.Load()))
	e.counter(ch, sentBytesDesc, float64(c.sent.Load()))
	e.counter(ch, receivedBytesDesc, float64(c.received.Load()))
	e.counter(ch, fullPushesDesc, float64(c.fullPushes.Load()))
	e.counter(ch, shardPullsDesc, float64(c.shardPulls.Load()))
	for i := range c.failures {
		ch <- prometheus.MustNewConstMetric(syncFailuresDesc, prometheus.CounterValue, float64(c.failures[i].Load()), e.causeLabels[i]...)
	}
	e.gauge(ch, lastSyncAgeDesc, lastSync.Seconds())
}

func (e *entry) gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, e.labels...)
}

func (e *entry) counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, e.labels...)
}
