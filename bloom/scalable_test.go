package bloom_test

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/netip"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/race"
	"github.com/mitzbloom/mitzbloom/strategy"
)

func mustNewScalable[T any](t testing.TB, f funnel.Funnel[T], n int64, p float64, opts ...bloom.Option) *bloom.Scalable[T] {
	t.Helper()
	s, err := bloom.NewScalable(f, n, p, opts...)
	require.NoError(t, err)
	return s
}

// predictedStages returns the sizing of the stages a Scalable of n0 values
// at p, growth g and tightening r needs to hold total values: each stage
// sized with Size for n0·gⁱ values at p·(1−r)·rⁱ, computed as repeated
// products, as the documentation promises.
func predictedStages(t *testing.T, n0 int64, p float64, g int64, r float64, total int64, opts ...bloom.Option) []bloom.StageStats {
	t.Helper()
	var out []bloom.StageStats
	n, q := n0, p*(1-r)
	for capacity := int64(0); capacity < total; {
		bits, k, err := bloom.Size(n, q, opts...)
		require.NoError(t, err)
		out = append(out, bloom.StageStats{ExpectedInsertions: n, FPP: q, BitSize: bits, NumHashFunctions: k})
		capacity += n
		n, q = n*g, q*r
	}
	return out
}

// scalableGrowth fills a Scalable from n0 to total distinct values, putting
// half of them one by one and half with PutMany, and checks what the
// package promises at that size: no false negative, an observed rate of
// false positives over absent values within fpp (plus slack, sigmas
// standard deviations of the observed rate, for rates that the bound lets
// come close to fpp), an ExpectedFPP within fpp (or, with slack, within
// 3% more) and close to the observed
// rate, a count within 10%, and the stages the arguments predict.
func scalableGrowth(t *testing.T, n0, total, absent int64, p, sigmas float64, g int, r float64, sizeOpts ...bloom.Option) *bloom.Scalable[int64] {
	t.Helper()
	s := mustNewScalable(t, funnel.Int64, n0, p, append([]bloom.Option{bloom.WithGrowth(g), bloom.WithTightening(r)}, sizeOpts...)...)
	batch := make([]int64, 0, 1000)
	for i := int64(0); i < total; i++ {
		if i%2 == 0 {
			s.Put(i)
			continue
		}
		batch = append(batch, i)
		if len(batch) == cap(batch) {
			s.PutMany(batch)
			batch = batch[:0]
		}
	}
	s.PutMany(batch)

	// No false negative, through both lookups.
	var answers []bool
	missing := 0
	for from := int64(0); from < total; from += 1000 {
		batch = batch[:0]
		for i := from; i < min(from+1000, total); i++ {
			batch = append(batch, i)
			if !s.MightContain(i) {
				missing++
			}
		}
		answers = s.MightContainMany(answers[:0], batch)
		for _, ok := range answers {
			if !ok {
				missing++
			}
		}
	}
	require.Zero(t, missing, "false negatives")

	// Absent values: negative, so disjoint from the values put.
	positives := 0
	for i := int64(1); i <= absent; i++ {
		if s.MightContain(-i) {
			positives++
		}
	}
	observed := float64(positives) / float64(absent)
	sigma := math.Sqrt(p * (1 - p) / float64(absent))
	assert.LessOrEqual(t, observed, p+sigmas*sigma, "observed false-positive rate over %d absent values", absent)

	st := s.Stats()
	assert.Equal(t, p, st.FPP, "the fpp the Scalable was made with")
	expected := st.ExpectedFPP
	if sigmas == 0 {
		assert.Less(t, expected, p, "ExpectedFPP")
	} else {
		// A full stage's rate lands within a few percent of the one it is
		// sized for, either way, as Guava rounds k: where the rates sum to
		// nearly p, the estimate may pass p by that much.
		assert.Less(t, expected, 1.03*p, "ExpectedFPP")
	}
	// The estimate is the probability the observed rate measures: they
	// differ by the sampling error, whose standard deviation is
	// sqrt(e(1−e)/absent), and a little for the estimate's own.
	sd := math.Sqrt(expected * (1 - expected) / float64(absent))
	assert.InDelta(t, expected, observed, 4*sd+0.1*expected, "ExpectedFPP against the observed rate")

	count := s.ApproximateElementCount()
	assert.Equal(t, st.ApproximateElementCount, count)
	assert.InEpsilon(t, total, count, 0.10, "ApproximateElementCount")

	// The stages: as many as the capacity needs, each the one predicted.
	want := predictedStages(t, n0, p, int64(g), r, total, sizeOpts...)
	require.Len(t, st.Stages, len(want), "stages")
	var bits int64
	var rates float64
	for i, w := range want {
		got := st.Stages[i]
		assert.Equal(t, w.ExpectedInsertions, got.ExpectedInsertions, "stage %d expected insertions", i)
		assert.Equal(t, w.FPP, got.FPP, "stage %d rate", i)
		assert.Equal(t, w.BitSize, got.BitSize, "stage %d bits", i)
		assert.Equal(t, w.NumHashFunctions, got.NumHashFunctions, "stage %d hash functions", i)
		if i < len(want)-1 {
			// A full stage got its values, near enough: a shard counter
			// fills it within a few percent of its share.
			assert.InEpsilon(t, w.ExpectedInsertions, got.Inserts, 0.05, "stage %d inserts", i)
		}
		bits += w.BitSize
		rates += w.FPP
	}
	assert.Equal(t, bits, st.BitSize)
	assert.Less(t, rates, p, "the sum of the stages' rates")
	t.Logf("%s: %d stages, observed %.5f, expected %.5f, count %d, %.3f times the bits of one filter",
		s, len(st.Stages), observed, expected, count, float64(st.BitSize)/float64(filterBits(t, total, p, sizeOpts...)))
	return s
}

func filterBits(t *testing.T, n int64, p float64, opts ...bloom.Option) int64 {
	t.Helper()
	bits, _, err := bloom.Size(n, p, opts...)
	require.NoError(t, err)
	return bits
}

// TestScalableThousandfold checks the growth a Scalable is for: 1,000
// values grown to 1,000,000 at p = 0.01 with the defaults keep the rate
// within p, over a million absent values, and take at most twice the bits
// of a filter sized for 1,000,000. Under the race detector, which makes it about ten times
// slower, the test is scaled down to 100 grown to 100,000 (still 1,000
// times); the CI's other pass runs it in full.
func TestScalableThousandfold(t *testing.T) {
	n0, total, absent := int64(1000), int64(1_000_000), int64(1_000_000)
	if testing.Short() && race.Enabled {
		n0, total, absent = 100, 100_000, 200_000
	}
	const p = 0.01
	s := scalableGrowth(t, n0, total, absent, p, 0, 2, 0.9)
	ratio := float64(s.Stats().BitSize) / float64(filterBits(t, total, p))
	assert.LessOrEqual(t, ratio, 2.0, "BitSize against New(f, %d, %v)", total, p)
}

// TestScalableBound checks the bound over growth factors and tightening
// ratios, 1,000 values grown 200 times (20 times under -race -short). A
// ratio of 0.5 spends nearly all of p on the first stages, so the observed
// rate may exceed p by sampling error: it is allowed three standard
// deviations. The first stage starts at 1,000 values because in filters of
// a few thousand bits Guava's double hashing makes more false positives
// than the estimate from the bits set, by 10 to 20% at 100 values.
func TestScalableBound(t *testing.T) {
	n0, total, absent := int64(1000), int64(200_000), int64(200_000)
	if testing.Short() && race.Enabled {
		total, absent = 20_000, 50_000
	}
	for _, g := range []int{2, 3, 4} {
		for _, r := range []float64{0.5, 0.8, 0.9} {
			t.Run(fmt.Sprintf("growth %d tightening %v", g, r), func(t *testing.T) {
				scalableGrowth(t, n0, total, absent, 0.01, 3, g, r)
			})
		}
	}
	t.Run("mitz32 legacy k p=0.001", func(t *testing.T) {
		scalableGrowth(t, n0, total, absent, 0.001, 3, 2, 0.9, bloom.WithStrategy(strategy.Murmur128Mitz32), bloom.WithLegacyHashCount())
	})
}

// TestScalableMemoryArithmetic checks the figures of Scalable's
// documentation: with the defaults, the bits of the stages that 1,000
// values grown to N need, against those of New(f, N, 0.01).
func TestScalableMemoryArithmetic(t *testing.T) {
	for _, c := range []struct {
		total   int64
		g       int64
		r       float64
		atLeast float64
		atMost  float64
	}{
		{1_000_000, 2, 0.9, 1.70, 1.75},
		{1_100_000, 2, 0.9, 3.1, 3.25},
		{1_000_000, 4, 0.9, 2.15, 2.25},
		{2_000_000, 4, 0.9, 4.4, 4.5},
		{1_000_000, 2, 0.5, 2.35, 2.45},
	} {
		var bits int64
		for _, st := range predictedStages(t, 1000, 0.01, c.g, c.r, c.total) {
			bits += st.BitSize
		}
		ratio := float64(bits) / float64(filterBits(t, c.total, 0.01))
		assert.True(t, c.atLeast <= ratio && ratio <= c.atMost, "growth %d, tightening %v, %d values: %.3f times, want %v to %v", c.g, c.r, c.total, ratio, c.atLeast, c.atMost)
	}
}

// TestScalablePut checks Put's answers: single-threaded, the opposite of
// MightContain just before, across growths, with values put again.
func TestScalablePut(t *testing.T) {
	s := mustNewScalable(t, funnel.Uint64, 10, 0.01)
	r := rand.New(rand.NewPCG(31, 1))
	for range 5000 {
		v := r.Uint64N(3000) // many values come again
		before := s.MightContain(v)
		assert.Equal(t, !before, s.Put(v), "Put(%d)", v)
		require.True(t, s.MightContain(v))
	}
	assert.Greater(t, len(s.Stats().Stages), 5)
	// A value put again is not put in a newer stage, so the count of
	// values is about that of distinct ones.
	assert.InEpsilon(t, 3000*(1-math.Exp(-5000.0/3000)), s.ApproximateElementCount(), 0.1)
}

// TestScalableDuplicatesTakeNoRoom puts the same values over and over: once
// they are in, the filter must not grow.
func TestScalableDuplicatesTakeNoRoom(t *testing.T) {
	s := mustNewScalable(t, funnel.Int64, 100, 0.01)
	vs := make([]int64, 500)
	for i := range vs {
		vs[i] = int64(i)
	}
	s.PutMany(vs)
	stages := len(s.Stats().Stages)
	for range 10 {
		s.PutMany(vs)
		for _, v := range vs {
			s.Put(v)
		}
	}
	assert.Equal(t, stages, len(s.Stats().Stages))
	assert.InEpsilon(t, 500, s.ApproximateElementCount(), 0.05)
}

func TestScalableArguments(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int64
		p    float64
		opts []bloom.Option
	}{
		{"negative n", -1, 0.01, nil},
		{"p 0", 100, 0, nil},
		{"p 1", 100, 1, nil},
		{"growth 1", 100, 0.01, []bloom.Option{bloom.WithGrowth(1)}},
		{"growth 0", 100, 0.01, []bloom.Option{bloom.WithGrowth(0)}},
		{"tightening 0", 100, 0.01, []bloom.Option{bloom.WithTightening(0)}},
		{"tightening 1", 100, 0.01, []bloom.Option{bloom.WithTightening(1)}},
		{"tightening NaN", 100, 0.01, []bloom.Option{bloom.WithTightening(math.NaN())}},
		{"nil strategy", 100, 0.01, []bloom.Option{bloom.WithStrategy(nil)}},
	} {
		_, err := bloom.NewScalable(funnel.String, c.n, c.p, c.opts...)
		assert.ErrorIs(t, err, bloom.ErrInvalidArgument, c.name)
	}
	_, err := bloom.NewScalable[string](nil, 100, 0.01)
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument, "nil funnel")

	// Growth and tightening do not change a Filter.
	a, _, err := bloom.Size(1000, 0.01)
	require.NoError(t, err)
	b, _, err := bloom.Size(1000, 0.01, bloom.WithGrowth(4), bloom.WithTightening(0.5))
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

// TestScalableStopsGrowing makes the second stage impossible, by a growth
// that overflows its number of values: the first one then takes every
// value, and nothing is lost.
func TestScalableStopsGrowing(t *testing.T) {
	s := mustNewScalable(t, funnel.Int64, 1, 0.01, bloom.WithGrowth(math.MaxInt))
	for i := range int64(100) {
		s.Put(i)
	}
	for i := range int64(100) {
		require.True(t, s.MightContain(i))
	}
	assert.Len(t, s.Stats().Stages, 1)
}

func TestScalableString(t *testing.T) {
	s := mustNewScalable(t, funnel.String, 1000, 0.01)
	bits, _, err := bloom.Size(1000, 0.001)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("bloom.Scalable{funnel.String MURMUR128_MITZ_64 1 stages, %d bits, growth 2, tightening 0.9}", bits), s.String())
}

// TestScalableConcurrentGrowth puts from many goroutines, one by one and in
// batches, into a Scalable that grows through many stages meanwhile, with
// readers racing them. Every value a goroutine has put is found by it
// right after and by everyone at the end; every stage but the newest got
// about its share of values, so no fill added two stages (an extra stage
// would have stayed nearly empty); and the stages are the predicted ones.
func TestScalableConcurrentGrowth(t *testing.T) {
	const writers, readers = 8, 2
	per := int64(20_000)
	if testing.Short() {
		per = 4000
	}
	const n0 = 64
	s := mustNewScalable(t, funnel.Int64, n0, 0.01)
	var wg sync.WaitGroup
	errs := make(chan string, writers+readers)
	for g := range int64(writers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]int64, 0, 100)
			for i := g * per; i < (g+1)*per; i++ {
				if g%2 == 0 {
					s.Put(i)
					if !s.MightContain(i) {
						errs <- fmt.Sprintf("goroutine %d: %d not found after its Put", g, i)
						return
					}
					continue
				}
				batch = append(batch, i)
				if len(batch) == cap(batch) {
					s.PutMany(batch)
					for _, ok := range s.MightContainMany(nil, batch) {
						if !ok {
							errs <- fmt.Sprintf("goroutine %d: a value not found after its PutMany", g)
							return
						}
					}
					batch = batch[:0]
				}
			}
		}()
	}
	done := make(chan struct{})
	var rg sync.WaitGroup
	for range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				_ = s.MightContain(-1)
				_ = s.ApproximateElementCount()
				_ = s.String()
				_ = s.Stats()
				if _, err := s.WriteTo(io.Discard); err != nil {
					errs <- err.Error()
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	rg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	total := writers * per
	for i := range total {
		if !s.MightContain(i) {
			t.Fatalf("%d lost", i)
		}
	}
	st := s.Stats()
	want := predictedStages(t, n0, 0.01, 2, 0.9, total)
	require.GreaterOrEqual(t, len(st.Stages), len(want)-1)
	require.LessOrEqual(t, len(st.Stages), len(want)+1)
	for i, got := range st.Stages {
		w := predictedStages(t, n0, 0.01, 2, 0.9, n0<<(i+1)-n0)[i]
		assert.Equal(t, w.BitSize, got.BitSize, "stage %d bits", i)
		assert.Equal(t, w.ExpectedInsertions, got.ExpectedInsertions, "stage %d", i)
		if i < len(st.Stages)-1 {
			// Full: at least its share (less the few percent a shard
			// counter may stop short), at most the 1/32 more that Puts
			// may add while the next stage is allocated, in each of up
			// to 8 shards, plus one value per writer that had loaded the
			// stages before the growth.
			assert.GreaterOrEqual(t, got.Inserts, got.ExpectedInsertions*95/100, "stage %d inserts", i)
			assert.LessOrEqual(t, got.Inserts, got.ExpectedInsertions+got.ExpectedInsertions/32+8*writers+writers, "stage %d inserts", i)
		}
	}
	assert.InEpsilon(t, total, s.ApproximateElementCount(), 0.1)
}

// TestScalableZeroAllocs requires Put and MightContain, and the batch calls
// with room in dst, to allocate nothing once no stage is being added.
func TestScalableZeroAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop items at random, so allocation counts mean nothing; .ci/run also runs the tests without -race")
	}
	s := mustNewScalable(t, funnel.String, 10, 0.01)
	for i := range 1000 {
		s.Put(fmt.Sprint(i)) // several stages
	}
	require.Greater(t, len(s.Stats().Stages), 3)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { s.Put("7") }), "Put")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { s.MightContain("x") }), "MightContain")
	vs := []string{"1", "2", "x", "y"}
	dst := make([]bool, 0, len(vs))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { s.PutMany(vs[:2]) }), "PutMany")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { dst = s.MightContainMany(dst[:0], vs) }), "MightContainMany")

	a := mustNewScalable(t, funnel.AddrPort, 10, 0.01)
	ap := netip.MustParseAddrPort("10.0.0.1:443")
	a.Put(ap)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { a.Put(ap) }), "Put AddrPort")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { a.MightContain(ap) }), "MightContain AddrPort")
}

// TestScalableLargeBatches checks MightContainMany and PutMany where the
// newest stage is large enough for batch lookups to be prefetched, and so
// an older one's too: against MightContain and Put, on values in either
// stage and values never put.
func TestScalableLargeBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 12 MB of stages")
	}
	const n0 = 800_000
	s := mustNewScalable(t, funnel.Int64, n0, 1e-9)
	vs := make([]int64, 0, 256)
	for i := int64(0); i < n0+50_000; i += 256 {
		vs = vs[:0]
		for j := i; j < i+256; j++ {
			vs = append(vs, j)
		}
		s.PutMany(vs)
	}
	st := s.Stats()
	require.Len(t, st.Stages, 2)
	require.GreaterOrEqual(t, st.Stages[1].BitSize/8, int64(8<<20), "the newest stage is below the prefetch threshold")
	require.Positive(t, st.Stages[1].Inserts)

	var probes []int64
	for i := int64(0); i < n0+50_000; i += 97 {
		probes = append(probes, i, -i-1) // put, and never put
	}
	got := s.MightContainMany(nil, probes)
	present := 0
	for i, v := range probes {
		require.Equal(t, s.MightContain(v), got[i], "value %d", v)
		if v >= 0 {
			require.True(t, got[i], "false negative for %d", v)
		} else if got[i] {
			present++
		}
	}
	assert.Less(t, present, 5, "false positives at p = 1e-9")

	// PutMany of values either stage holds adds nothing; of new ones, what
	// Put would.
	before, absent := s.ApproximateElementCount(), int64(0)
	for i, ok := range got[:1000] {
		if !ok {
			absent++
			require.Negative(t, probes[i])
		}
	}
	s.PutMany(probes[:1000:1000])
	assert.Equal(t, before+absent, s.ApproximateElementCount())
}
