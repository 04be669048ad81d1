package bloomprom_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloomprom"
)

// constCollector sends, at each Collect, constant metrics of the
// descriptions, types and label values that another collector sent once:
// what any collector of those metrics costs in client_golang's
// MustNewConstMetric, with nothing read.
type constCollector struct {
	metrics []constMetric
}

type constMetric struct {
	desc   *prometheus.Desc
	typ    prometheus.ValueType
	value  float64
	labels []string
}

// constOf returns the constant collector of what c sends now.
func constOf(t testing.TB, c prometheus.Collector) *constCollector {
	ch := make(chan prometheus.Metric, 1000)
	c.Collect(ch)
	close(ch)
	out := new(constCollector)
	for m := range ch {
		var pb dto.Metric
		require.NoError(t, m.Write(&pb))
		cm := constMetric{desc: m.Desc(), typ: prometheus.GaugeValue, value: pb.GetGauge().GetValue()}
		if pb.Counter != nil {
			cm.typ, cm.value = prometheus.CounterValue, pb.GetCounter().GetValue()
		}
		for _, l := range pb.GetLabel() {
			cm.labels = append(cm.labels, l.GetValue())
		}
		out.metrics = append(out.metrics, cm)
	}
	return out
}

func (c *constCollector) Describe(ch chan<- *prometheus.Desc) {
	prometheus.DescribeByCollect(c, ch)
}

func (c *constCollector) Collect(ch chan<- prometheus.Metric) {
	for i := range c.metrics {
		m := &c.metrics[i]
		ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value, m.labels...)
	}
}

// collectAllocs returns the allocations of one Collect of c, into a
// channel with room for all its metrics.
func collectAllocs(c prometheus.Collector) float64 {
	ch := make(chan prometheus.Metric, 1000)
	return testing.AllocsPerRun(100, func() {
		c.Collect(ch)
		for len(ch) > 0 {
			<-ch
		}
	})
}

// TestCollectAllocs requires a scrape of filters in memory to allocate
// what a collector of constant metrics of the same descriptions and labels
// allocates, and nothing more: the metrics client_golang builds. A
// Scalable's Stats allocates the slice of its stages, one allocation.
func TestCollectAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates of its own, so allocation counts mean nothing; .ci/run also runs the tests without -race")
	}
	c := bloomprom.NewCollector()
	registerInMemory(t, c)
	require.True(t, c.Unregister("scalable"))
	ours, consts := collectAllocs(c), collectAllocs(constOf(t, c))
	t.Logf("a Filter with a Lookups and a Rotating: %v allocations a scrape, %v for constant metrics", ours, consts)
	assert.Positive(t, consts)
	assert.Equal(t, consts, ours)

	c = bloomprom.NewCollector()
	_, _, sc, _ := registerInMemory(t, c)
	ours, consts = collectAllocs(c), collectAllocs(constOf(t, c))
	t.Logf("with a Scalable of %d stages: %v allocations a scrape, %v for constant metrics", len(sc.Stats().Stages), ours, consts)
	assert.Equal(t, consts+1, ours, "a Scalable's Stats allocates its slice of stages, and nothing else should")
}

// BenchmarkCollect times a scrape of a Filter, a Rotating and a Scalable
// of 10,000 values each, with a Lookups around the Filter, against a
// collector of constant metrics of the same descriptions and labels: the
// difference is the reading of the filters, a pass over their bits.
func BenchmarkCollect(b *testing.B) {
	c := bloomprom.NewCollector()
	registerInMemory(b, c)
	for _, bc := range []struct {
		name string
		c    prometheus.Collector
	}{{"collector=bloomprom", c}, {"collector=constant", constOf(b, c)}} {
		b.Run(bc.name, func(b *testing.B) {
			ch := make(chan prometheus.Metric, 1000)
			b.ReportAllocs()
			for b.Loop() {
				bc.c.Collect(ch)
				for len(ch) > 0 {
					<-ch
				}
			}
		})
	}
}
