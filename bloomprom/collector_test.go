package bloomprom_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/bloomprom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// samples maps "name{labels}" to the value of each sample, as gathered
// by a pedantic registry, which checks what the collector sends against
// what it describes.
type samples map[string]float64

// gather registers c with a new pedantic registry and gathers once.
func gather(t *testing.T, c prometheus.Collector) samples {
	t.Helper()
	s, err := gatherOnce(c)
	require.NoError(t, err)
	return s
}

// gatherOnce registers c on a registry of its own and gathers it.
func gatherOnce(c prometheus.Collector) (samples, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	mfs, err := reg.Gather()
	return samplesOf(mfs), err
}

func samplesOf(mfs []*dto.MetricFamily) samples {
	out := samples{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := mf.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			}
		}
	}
	return out
}

// of returns the value of metric name of filter, and whether it has one.
func (s samples) of(name, filter string, more ...string) (float64, bool) {
	labels := []string{fmt.Sprintf("filter=%q", filter)}
	for i := 0; i+1 < len(more); i += 2 {
		labels = append(labels, fmt.Sprintf("%s=%q", more[i], more[i+1]))
	}
	sort.Strings(labels) // as client_golang orders them
	v, ok := s[name+"{"+strings.Join(labels, ",")+"}"]
	return v, ok
}

// get is of for a sample that must be there.
func (s samples) get(t *testing.T, name, filter string, more ...string) float64 {
	t.Helper()
	v, ok := s.of(name, filter, more...)
	if !ok {
		t.Fatalf("no sample %s of filter %q %v; have:\n%s", name, filter, more, s)
	}
	return v
}

func (s samples) String() string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %v\n", k, s[k])
	}
	return b.String()
}

// names returns the metric names of the samples of filter.
func (s samples) names(filter string) []string {
	var out []string
	for k := range s {
		if strings.Contains(k, `filter="`+filter+`"`) {
			name, _, _ := strings.Cut(k, "{")
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestFilter requires a bloom.Filter's metrics to be its own statistics,
// and those that compare it with its sizing to come from WithSizing.
func TestFilter(t *testing.T) {
	f, err := bloom.New(funnel.Int64, 1000, 0.01)
	require.NoError(t, err)
	c := bloomprom.NewCollector()
	require.NoError(t, c.Register("plain", f, bloomprom.WithSizing(1000, 0.01)))
	bare, err := bloom.New(funnel.Int64, 1000, 0.01)
	require.NoError(t, err)
	require.NoError(t, c.Register("bare", bare))

	for _, n := range []int64{0, 500, 1000, 3000} {
		for i := range n {
			f.Put(i)
		}
		s := gather(t, c)
		what := fmt.Sprintf("%d put", n)
		assert.Equal(t, 1.0, s.get(t, "mitzbloom_filter_up", "plain"), what)
		assert.Equal(t, float64(f.BitSize()), s.get(t, "mitzbloom_filter_bitsize", "plain"), what)
		assert.Equal(t, float64(f.BitCount()), s.get(t, "mitzbloom_filter_bitcount", "plain"), what)
		assert.Equal(t, float64(f.BitCount())/float64(f.BitSize()), s.get(t, "mitzbloom_filter_fill_ratio", "plain"), what)
		assert.Equal(t, float64(f.ApproximateElementCount()), s.get(t, "mitzbloom_filter_approximate_elements", "plain"), what)
		assert.Equal(t, f.ExpectedFPP(), s.get(t, "mitzbloom_filter_expected_fpp", "plain"), what)
		assert.Equal(t, 1000.0, s.get(t, "mitzbloom_filter_expected_insertions", "plain"), what)
		assert.Equal(t, float64(f.ApproximateElementCount())/1000, s.get(t, "mitzbloom_filter_load_ratio", "plain"), what)
		assert.Equal(t, 0.01, s.get(t, "mitzbloom_filter_target_fpp", "plain"), what)
		assert.GreaterOrEqual(t, s.get(t, "mitzbloom_filter_read_duration_seconds", "plain"), 0.0, what)
	}
	s := gather(t, c)
	assert.Greater(t, s.get(t, "mitzbloom_filter_expected_fpp", "plain"), s.get(t, "mitzbloom_filter_target_fpp", "plain"),
		"3000 values in a filter for 1000: above its target")
	assert.Greater(t, s.get(t, "mitzbloom_filter_load_ratio", "plain"), 2.5)

	// Without its sizing, the filter has no metrics that compare with it.
	assert.Equal(t, []string{
		"mitzbloom_filter_approximate_elements", "mitzbloom_filter_bitcount", "mitzbloom_filter_bitsize",
		"mitzbloom_filter_expected_fpp", "mitzbloom_filter_fill_ratio", "mitzbloom_filter_read_duration_seconds", "mitzbloom_filter_up",
	}, s.names("bare"))
}

// TestSaturated requires a filter with every bit set to report an
// infinite element count and load, as ApproximateElementCount's
// math.MaxInt64 means, and an expected FPP of 1.
func TestSaturated(t *testing.T) {
	f, err := bloom.New(funnel.Int64, 1, 0.5)
	require.NoError(t, err)
	for i := range int64(1000) {
		f.Put(i)
	}
	require.Equal(t, f.BitSize(), f.BitCount())
	c := bloomprom.NewCollector()
	require.NoError(t, c.Register("full", f, bloomprom.WithSizing(1, 0.5)))
	s := gather(t, c)
	assert.Equal(t, math.Inf(1), s.get(t, "mitzbloom_filter_approximate_elements", "full"))
	assert.Equal(t, math.Inf(1), s.get(t, "mitzbloom_filter_load_ratio", "full"))
	assert.Equal(t, 1.0, s.get(t, "mitzbloom_filter_expected_fpp", "full"))
	assert.Equal(t, 1.0, s.get(t, "mitzbloom_filter_fill_ratio", "full"))
}

// TestRotating requires a Rotating's metrics to be its Stats, with its own
// sizing and window, through rotations on time and on count.
func TestRotating(t *testing.T) {
	const window = time.Minute
	clock := bloomtest.NewClock(epoch)
	r, err := bloom.NewRotating(funnel.Int64, 10_000, 0.01, window, bloom.WithClock(clock))
	require.NoError(t, err)
	c := bloomprom.NewCollector()
	require.NoError(t, c.Register("window", r))

	check := func(what string) {
		t.Helper()
		s := gather(t, c)
		st := r.Stats()
		assert.Equal(t, float64(st.BitSize), s.get(t, "mitzbloom_filter_bitsize", "window"), what)
		bits := float64(st.BitSize / 2)
		assert.Equal(t, math.Round(st.Current.FillRatio*bits)+math.Round(st.Previous.FillRatio*bits), s.get(t, "mitzbloom_filter_bitcount", "window"), what)
		assert.Equal(t, float64(st.ApproximateElementCount), s.get(t, "mitzbloom_filter_approximate_elements", "window"), what)
		assert.Equal(t, st.ExpectedFPP, s.get(t, "mitzbloom_filter_expected_fpp", "window"), what)
		assert.Equal(t, 20_000.0, s.get(t, "mitzbloom_filter_expected_insertions", "window"), what)
		assert.InDelta(t, 1-0.99*0.99, s.get(t, "mitzbloom_filter_target_fpp", "window"), 1e-15, what)
		assert.Equal(t, float64(st.Rotations), s.get(t, "mitzbloom_filter_rotations_total", "window"), what)
		assert.Equal(t, float64(st.EarlyRotations), s.get(t, "mitzbloom_filter_early_rotations_total", "window"), what)
		assert.Equal(t, st.Current.Age.Seconds(), s.get(t, "mitzbloom_filter_generation_age_seconds", "window"), what)
		assert.Equal(t, window.Seconds(), s.get(t, "mitzbloom_filter_generation_period_seconds", "window"), what)
	}
	check("new")
	for i := range int64(3000) {
		r.Put(i)
	}
	clock.Advance(20 * time.Second)
	check("3000 put, 20 s in")
	clock.Advance(window)
	check("a rotation on time")
	for i := range int64(12_000) {
		r.Put(1_000_000 + i)
	}
	check("a rotation on count")

	s := gather(t, c)
	assert.Equal(t, 2.0, s.get(t, "mitzbloom_filter_rotations_total", "window"))
	assert.Equal(t, 1.0, s.get(t, "mitzbloom_filter_early_rotations_total", "window"))
	// A full generation and one just begun, at about its target: the
	// window is as full as it is sized to be.
	assert.InDelta(t, 0.5, s.get(t, "mitzbloom_filter_load_ratio", "window"), 0.1)
}

// TestScalable requires a Scalable's metrics to be those of its stages,
// each read back as the filter it is.
func TestScalable(t *testing.T) {
	sc, err := bloom.NewScalable(funnel.Int64, 1000, 0.01)
	require.NoError(t, err)
	for i := range int64(10_000) {
		sc.Put(i)
	}
	c := bloomprom.NewCollector()
	require.NoError(t, c.Register("growing", sc))
	s := gather(t, c)

	// Its stages, as Java would read them: one Guava filter after another.
	var buf bytes.Buffer
	_, err = sc.WriteTo(&buf)
	require.NoError(t, err)
	var bits, set int64
	stages := 0
	for {
		stage, err := bloom.ReadFrom(&buf, funnel.Int64)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		bits += stage.BitSize()
		set += stage.BitCount()
		stages++
	}
	st := sc.Stats()
	var expected int64
	for _, stage := range st.Stages {
		expected += stage.ExpectedInsertions
	}
	assert.Equal(t, float64(stages), s.get(t, "mitzbloom_filter_stages", "growing"))
	assert.Equal(t, float64(bits), s.get(t, "mitzbloom_filter_bitsize", "growing"))
	assert.Equal(t, float64(set), s.get(t, "mitzbloom_filter_bitcount", "growing"))
	assert.Equal(t, float64(sc.ApproximateElementCount()), s.get(t, "mitzbloom_filter_approximate_elements", "growing"))
	assert.Equal(t, st.ExpectedFPP, s.get(t, "mitzbloom_filter_expected_fpp", "growing"))
	assert.Equal(t, float64(expected), s.get(t, "mitzbloom_filter_expected_insertions", "growing"))
	assert.Equal(t, 0.01, s.get(t, "mitzbloom_filter_target_fpp", "growing"))
	assert.Less(t, s.get(t, "mitzbloom_filter_expected_fpp", "growing"), 0.01, "a Scalable stays below its target")
	assert.Less(t, s.get(t, "mitzbloom_filter_load_ratio", "growing"), 1.0)
}

// TestReadWithoutSizing: a Rotating or a Scalable read without its sizing
// takes it from WithSizing, and one that knows its own refuses another.
func TestReadWithoutSizing(t *testing.T) {
	clock := bloomtest.NewClock(epoch)
	r, err := bloom.NewRotating(funnel.String, 1000, 0.01, time.Minute, bloom.WithClock(clock))
	require.NoError(t, err)
	data, err := r.MarshalBinary()
	require.NoError(t, err)
	read, err := bloom.ReadRotating(bytes.NewReader(data), funnel.String, bloom.WithClock(clock))
	require.NoError(t, err)

	c := bloomprom.NewCollector()
	require.NoError(t, c.Register("read", read))
	_, ok := gather(t, c).of("mitzbloom_filter_target_fpp", "read")
	assert.False(t, ok, "a Rotating read without its sizing has no target")
	require.True(t, c.Unregister("read"))
	require.NoError(t, c.Register("read", read, bloomprom.WithSizing(1000, 0.01)))
	s := gather(t, c)
	assert.Equal(t, 2000.0, s.get(t, "mitzbloom_filter_expected_insertions", "read"))
	_, ok = s.of("mitzbloom_filter_generation_period_seconds", "read")
	assert.False(t, ok, "a Rotating read without its window has no period")

	err = c.Register("made", r, bloomprom.WithSizing(2000, 0.01))
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, "made for n = 1000 at p = 0.01")
	require.NoError(t, c.Register("made", r, bloomprom.WithSizing(1000, 0.01)), "the same sizing")

	sc, err := bloom.NewScalable(funnel.String, 100, 0.05)
	require.NoError(t, err)
	assert.ErrorContains(t, c.Register("scalable", sc, bloomprom.WithSizing(100, 0.01)), "made for n = 100 at p = 0.05")

	// A Scalable read without its sizing: WithSizing gives its target, but
	// not its stages' sizes, which depend on its growth too.
	data, err = sc.MarshalBinary()
	require.NoError(t, err)
	readSc, err := bloom.ReadScalable(bytes.NewReader(data), funnel.String)
	require.NoError(t, err)
	require.NoError(t, c.Register("read scalable", readSc, bloomprom.WithSizing(100, 0.05)))
	s = gather(t, c)
	assert.Equal(t, 0.05, s.get(t, "mitzbloom_filter_target_fpp", "read scalable"))
	_, ok = s.of("mitzbloom_filter_expected_insertions", "read scalable")
	assert.False(t, ok)
	_, ok = s.of("mitzbloom_filter_load_ratio", "read scalable")
	assert.False(t, ok)
}

// TestRegisterErrors requires Register to refuse what it cannot report,
// with an error that says why, and Unregister to report what it removed,
// on a zero Collector, which is ready to use.
func TestRegisterErrors(t *testing.T) {
	f, err := bloom.New(funnel.String, 100, 0.01)
	require.NoError(t, err)
	c := new(bloomprom.Collector)
	assert.Empty(t, gather(t, c), "a zero Collector reports nothing")
	assert.False(t, c.Unregister("seen"))
	for _, tc := range []struct {
		name, filter string
		value        any
		opts         []bloomprom.Option
		want         string
	}{
		{"empty name", "", f, nil, "must be valid UTF-8 and not empty"},
		{"bad UTF-8", "\xff", f, nil, "must be valid UTF-8 and not empty"},
		{"nil", "nil", nil, nil, "filter is nil"},
		{"a nil *Filter", "nil filter", (*bloom.Filter[string])(nil), nil, "filter is nil"},
		{"a Lookups of a nil *Rotating", "nil rotating", bloomprom.CountLookups((*bloom.Rotating[string])(nil)), nil, "filter is nil"},
		{"not a filter", "string", "seen", nil, "string is not a filter of package bloom or redisfilter"},
		{"a Builder", "builder", new(bloom.Builder[string]), nil, "*bloom.Builder[string] is not a filter"},
		{"bad n", "n", f, []bloomprom.Option{bloomprom.WithSizing(0, 0.01)}, "n must be positive"},
		{"bad p", "p", f, []bloomprom.Option{bloomprom.WithSizing(10, 1)}, "p in (0, 1)"},
		{"bad timeout", "timeout", f, []bloomprom.Option{bloomprom.WithTimeout(0)}, "timeout must be positive"},
	} {
		err := c.Register(tc.filter, tc.value, tc.opts...)
		assert.ErrorIs(t, err, bloom.ErrInvalidArgument, tc.name)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	require.NoError(t, c.Register("seen", f))
	err = c.Register("seen", f)
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, `a filter named "seen" is already registered`)
	assert.True(t, c.Unregister("seen"))
	assert.False(t, c.Unregister("seen"))
	assert.Empty(t, gather(t, c), "no filter, no samples")
}

// TestLint runs client_golang's linter over the metrics of a filter of
// each kind in memory: names, units, help texts, counters' _total. The
// tests of filters in Redis and of a Hybrid lint theirs.
func TestLint(t *testing.T) {
	c := bloomprom.NewCollector()
	registerInMemory(t, c)
	lint(t, c)
	n, err := testutil.GatherAndCount(prometheus.Gatherers{mustRegistry(t, c)})
	require.NoError(t, err)
	t.Logf("%d samples of 3 filters", n)
}

// lint runs client_golang's linter over what c reports now.
func lint(t *testing.T, c prometheus.Collector) {
	t.Helper()
	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func mustRegistry(t *testing.T, c prometheus.Collector) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	return reg
}

// registerInMemory registers a filter of each kind in memory with c, with
// some values in each and a Lookups around one, and returns them.
func registerInMemory(t testing.TB, c *bloomprom.Collector) (*bloom.Filter[int64], *bloom.Rotating[int64], *bloom.Scalable[int64], *bloomprom.Lookups[int64]) {
	f, err := bloom.New(funnel.Int64, 10_000, 0.01)
	require.NoError(t, err)
	r, err := bloom.NewRotating(funnel.Int64, 10_000, 0.01, time.Hour)
	require.NoError(t, err)
	sc, err := bloom.NewScalable(funnel.Int64, 1000, 0.01)
	require.NoError(t, err)
	for i := range int64(5000) {
		f.Put(i)
		r.Put(i)
		sc.Put(i)
	}
	l := bloomprom.CountLookups(f)
	l.MightContain(1)
	l.MightContain(-1)
	require.NoError(t, c.Register("filter", l, bloomprom.WithSizing(10_000, 0.01)))
	require.NoError(t, c.Register("rotating", r))
	require.NoError(t, c.Register("scalable", sc))
	return f, r, sc, l
}
