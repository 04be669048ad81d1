package bloom_test

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/race"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// epoch is where the tests' manual clocks start; any time would do.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func mustNewRotating[T any](t testing.TB, f funnel.Funnel[T], n int64, p float64, window time.Duration, opts ...bloom.Option) *bloom.Rotating[T] {
	t.Helper()
	r, err := bloom.NewRotating(f, n, p, window, opts...)
	require.NoError(t, err)
	return r
}

// TestRotatingWindow walks a value through its life on a manual clock: found
// for at least one window after its Put, forgotten two windows after it.
func TestRotatingWindow(t *testing.T) {
	const w = time.Minute
	clock := bloomtest.NewClock(epoch)
	r := mustNewRotating(t, funnel.String, 1000, 0.001, w, bloom.WithClock(clock))

	assert.True(t, r.Put("a"), "first Put of a")
	assert.False(t, r.Put("a"), "a again, same window")
	assert.True(t, r.MightContain("a"))
	assert.False(t, r.MightContain("b"))

	clock.Advance(w - time.Nanosecond)
	assert.Zero(t, r.Stats().Rotations, "the window has not ended")
	assert.True(t, r.MightContain("a"))

	clock.Advance(time.Nanosecond) // epoch+w: a is in the previous generation
	assert.EqualValues(t, 1, r.Stats().Rotations)
	assert.True(t, r.MightContain("a"), "a, one window after its Put")
	assert.True(t, r.Put("b"), "first Put of b")

	clock.Advance(w - time.Nanosecond)
	assert.True(t, r.MightContain("a"), "a, just under two windows after its Put")
	assert.True(t, r.MightContain("b"))

	clock.Advance(time.Nanosecond) // epoch+2w: a's generation is dropped
	assert.EqualValues(t, 2, r.Stats().Rotations)
	assert.False(t, r.MightContain("a"), "a, two windows after its Put")
	assert.True(t, r.MightContain("b"), "b, one window after its Put")

	clock.Advance(w)
	assert.False(t, r.MightContain("b"), "b, two windows after its Put")
	assert.True(t, r.Put("a"), "a is new again")
	assert.Zero(t, r.Stats().EarlyRotations)
}

// TestRotatingRefresh puts a value once per window, late in each: it is never
// forgotten, because each Put refreshes it in the current generation.
func TestRotatingRefresh(t *testing.T) {
	const w = time.Hour
	clock := bloomtest.NewClock(epoch)
	r := mustNewRotating(t, funnel.Int64, 100, 0.001, w, bloom.WithClock(clock))
	r.Put(7)
	for i := range 10 {
		clock.Advance(w - time.Second)
		require.True(t, r.MightContain(7), "window %d", i)
		assert.False(t, r.Put(7), "window %d: 7 is remembered, not new", i)
		clock.Advance(time.Second)
	}
	assert.EqualValues(t, 10, r.Stats().Rotations)
}

// TestRotatingLongAdvance advances a manual clock by several windows at
// once: every window's rotation runs, so everything is forgotten, as it
// would be on a real clock.
func TestRotatingLongAdvance(t *testing.T) {
	const w = time.Second
	clock := bloomtest.NewClock(epoch)
	r := mustNewRotating(t, funnel.Int64, 100, 0.001, w, bloom.WithClock(clock))
	for i := range int64(50) {
		r.Put(i)
	}
	clock.Advance(3*w + w/2)
	st := r.Stats()
	assert.EqualValues(t, 3, st.Rotations)
	assert.Zero(t, st.ApproximateElementCount)
	for i := range int64(50) {
		assert.False(t, r.MightContain(i), "%d", i)
	}
	assert.Equal(t, w/2, st.Current.Age)
	assert.Equal(t, w+w/2, st.Previous.Age)
}

// TestRotatingPutReportsNew checks, over random operations and rotations,
// that single-threaded Put returns the opposite of what MightContain said
// just before.
func TestRotatingPutReportsNew(t *testing.T) {
	const w = time.Minute
	clock := bloomtest.NewClock(epoch)
	r := mustNewRotating(t, funnel.Int64, 200, 0.05, w, bloom.WithClock(clock))
	rng := rand.New(rand.NewPCG(1, 2))
	news := 0
	for i := range 20000 {
		v := rng.Int64N(600)
		before := r.MightContain(v)
		isNew := r.Put(v)
		require.Equal(t, !before, isNew, "op %d: Put(%d)", i, v)
		require.True(t, r.MightContain(v))
		if isNew {
			news++
		}
		if rng.IntN(500) == 0 {
			clock.Advance(time.Duration(rng.Int64N(int64(w))))
		}
	}
	st := r.Stats()
	t.Logf("%d new of 20000, %d rotations, %d early", news, st.Rotations, st.EarlyRotations)
	// Both kinds of rotation happened, or the test proved less than it says.
	assert.Positive(t, st.EarlyRotations)
	assert.Greater(t, st.Rotations, st.EarlyRotations)
}

// TestRotatingCountRotation fills a generation to its expected insertions:
// the Put that fills it starts a new one, so the values are in the previous
// generation; filling the next one drops them. A generation started on count
// gets a whole window from its start.
func TestRotatingCountRotation(t *testing.T) {
	const n, w = 100, time.Hour
	clock := bloomtest.NewClock(epoch)
	r := mustNewRotating(t, funnel.Int64, n, 0.001, w, bloom.WithClock(clock))
	// fill puts new values until n-1 more of them were new, which is what
	// fills a generation (a rare false positive does not count), and
	// returns the next value to put.
	fill := func(v int64) int64 {
		for news := 0; news < n-1; v++ {
			if r.Put(v) {
				news++
			}
		}
		return v
	}
	v := fill(0)
	st := r.Stats()
	require.Zero(t, st.Rotations, "one insert short of full")
	assert.EqualValues(t, n-1, st.Current.Inserts)
	for !r.Put(v) {
		v++
	}
	firstBatch := v + 1
	st = r.Stats()
	assert.EqualValues(t, 1, st.Rotations, "the nth insert rotates")
	assert.EqualValues(t, 1, st.EarlyRotations)
	assert.EqualValues(t, n, st.Previous.Inserts)
	// The Put that filled the generation finds it previous when it is
	// done, so it puts its value in the new one too.
	assert.EqualValues(t, 1, st.Current.Inserts)
	for i := range firstBatch {
		require.True(t, r.MightContain(i), "%d, in the previous generation", i)
	}

	v = fill(firstBatch)
	for r.Stats().Rotations < 2 {
		r.Put(v)
		v++
	}
	found := 0
	for i := range firstBatch {
		if r.MightContain(i) {
			found++
		}
	}
	// The first batch is gone, but for false positives: about 0.2%.
	assert.LessOrEqual(t, found, 3, "values from two generations ago")

	// Half a window in, a generation fills: its window ends 1.5w after the
	// epoch, not at w, where the timer of the first window fires.
	clock.Advance(w / 2)
	v = fill(v)
	for r.Stats().Rotations < 3 {
		r.Put(v)
		v++
	}
	clock.Advance(w / 2)
	assert.EqualValues(t, 3, r.Stats().Rotations, "w after the epoch")
	clock.Advance(w/2 - time.Nanosecond)
	assert.EqualValues(t, 3, r.Stats().Rotations, "just before 1.5w")
	clock.Advance(time.Nanosecond)
	st = r.Stats()
	assert.EqualValues(t, 4, st.Rotations, "1.5w after the epoch")
	assert.EqualValues(t, 3, st.EarlyRotations)
	assert.Zero(t, st.Current.Age)
}

// TestRotatingShardedCount fills generations sized for enough values that
// their insert counters are sharded: they must rotate within 5% of their
// expected insertions, and never after them.
func TestRotatingShardedCount(t *testing.T) {
	for _, n := range []int64{8191, 8192, 40000, 200000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			if testing.Short() && n > 50000 {
				t.Skip("large generation")
			}
			r := mustNewRotating(t, funnel.Int64, n, 0.01, time.Hour, bloom.WithClock(bloomtest.NewClock(epoch)))
			early := n * 95 / 100
			var news, v int64
			for ; news < n; v++ {
				if !r.Put(v) {
					continue
				}
				news++
				if news == early {
					require.Zero(t, r.Stats().Rotations, "rotated before %d of %d new values", early, n)
				}
			}
			assert.EqualValues(t, 1, r.Stats().Rotations, "no rotation after %d new values", n)
		})
	}
}

func TestRotatingArguments(t *testing.T) {
	clock := bloom.WithClock(bloomtest.NewClock(epoch))
	for _, c := range []struct {
		name   string
		f      funnel.Funnel[string]
		n      int64
		p      float64
		window time.Duration
		opts   []bloom.Option
		want   string
	}{
		{"zero window", funnel.String, 100, 0.01, 0, nil, "bloom: invalid argument: window (0s) must be > 0"},
		{"negative window", funnel.String, 100, 0.01, -time.Second, nil, "bloom: invalid argument: window (-1s) must be > 0"},
		{"nil funnel", nil, 100, 0.01, time.Second, nil, "bloom: invalid argument: funnel is nil"},
		{"nil clock", funnel.String, 100, 0.01, time.Second, []bloom.Option{bloom.WithClock(nil)}, "bloom: invalid argument: clock is nil"},
		{"negative n", funnel.String, -1, 0.01, time.Second, []bloom.Option{clock}, "bloom: invalid argument: expected insertions (-1) must be >= 0"},
		{"fpp 0", funnel.String, 100, 0, time.Second, nil, "bloom: invalid argument: false positive probability (0.0) must be > 0.0"},
		{"fpp 1", funnel.String, 100, 1, time.Second, nil, "bloom: invalid argument: false positive probability (1.0) must be < 1.0"},
		{"fpp NaN", funnel.String, 100, math.NaN(), time.Second, nil, "bloom: invalid argument: false positive probability (NaN) must be > 0.0"},
		{"nil strategy", funnel.String, 100, 0.01, time.Second, []bloom.Option{bloom.WithStrategy(nil)}, "bloom: invalid argument: strategy is nil"},
		{"too large", funnel.String, math.MaxInt64, 0.01, time.Second, nil, "bloom: invalid argument: could not create filter of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := bloom.NewRotating(c.f, c.n, c.p, c.window, c.opts...)
			assert.Nil(t, r)
			require.ErrorIs(t, err, bloom.ErrInvalidArgument)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestRotatingFilterOptions checks that the options for the generations
// reach them: a Rotating's generations are the filters New builds.
func TestRotatingFilterOptions(t *testing.T) {
	r := mustNewRotating(t, funnel.String, 3, 0.01, time.Minute,
		bloom.WithStrategy(strategy.Murmur128Mitz32),
		bloom.WithLegacyHashCount())
	f := mustNew(t, funnel.String, 3, 0.01, bloom.WithStrategy(strategy.Murmur128Mitz32), bloom.WithLegacyHashCount())
	want := fmt.Sprintf("bloom.Rotating{funnel.String MURMUR128_MITZ_32 2×%d bits, %d hash functions, window 1m0s}", f.BitSize(), f.NumHashFunctions())
	assert.Equal(t, want, r.String())
	// Current Guava's k for p = 0.01 is 7; Guava 31.x's, for n = 3, is not.
	assert.NotEqual(t, 7, f.NumHashFunctions())
	assert.Equal(t, "bloom.Rotating{funnel.String MURMUR128_MITZ_64 2×9600 bits, 7 hash functions, window 1m0s}",
		mustNewRotating(t, funnel.String, 1000, 0.01, time.Minute).String())
}

// TestRotatingStats compares Stats with filters built from the same values.
func TestRotatingStats(t *testing.T) {
	const w = 10 * time.Second
	clock := bloomtest.NewClock(epoch)
	r := mustNewRotating(t, funnel.Int64, 1000, 0.01, w, bloom.WithClock(clock))
	prev, cur := mustNew(t, funnel.Int64, 1000, 0.01), mustNew(t, funnel.Int64, 1000, 0.01)

	st := r.Stats()
	assert.EqualValues(t, 1000, st.ExpectedInsertions)
	assert.Equal(t, 0.01, st.FPP)
	assert.Equal(t, w, st.Window)
	assert.Equal(t, 2*cur.BitSize(), st.BitSize)
	assert.Zero(t, st.Rotations)
	assert.Zero(t, st.Current.Age)
	assert.Equal(t, w, st.Previous.Age, "the empty previous generation counts as a window old")
	assert.Zero(t, st.ExpectedFPP)
	assert.Zero(t, st.Current.FillRatio)

	var prevInserts, curInserts int64
	for i := range int64(600) {
		r.Put(i)
		if prev.Put(i) {
			prevInserts++
		}
	}
	clock.Advance(w + 3*time.Second)
	clock.Advance(2 * time.Second)
	// 300 values in both generations, 400 only in the current one.
	for i := int64(300); i < 1000; i++ {
		r.Put(i)
		if cur.Put(i) {
			curInserts++
		}
	}
	union := cur.Copy()
	require.NoError(t, union.PutAll(prev))

	st = r.Stats()
	assert.EqualValues(t, 1, st.Rotations)
	assert.Zero(t, st.EarlyRotations)
	assert.Equal(t, 5*time.Second, st.Current.Age)
	assert.Equal(t, w+5*time.Second, st.Previous.Age)
	for _, c := range []struct {
		name string
		got  bloom.GenerationStats
		want *bloom.Filter[int64]
	}{{"current", st.Current, cur}, {"previous", st.Previous, prev}} {
		assert.Equal(t, float64(c.want.BitCount())/float64(c.want.BitSize()), c.got.FillRatio, c.name)
		assert.Equal(t, c.want.ApproximateElementCount(), c.got.ApproximateElementCount, c.name)
		assert.Equal(t, c.want.ExpectedFPP(), c.got.ExpectedFPP, c.name)
	}
	// Inserts count the Puts that set a bit, about the distinct values.
	assert.Equal(t, curInserts, st.Current.Inserts)
	assert.Equal(t, prevInserts, st.Previous.Inserts)
	assert.InDelta(t, 700, curInserts, 2)
	assert.Equal(t, union.ApproximateElementCount(), st.ApproximateElementCount)
	assert.Equal(t, float64(union.BitCount())/float64(union.BitSize()), st.FillRatio)
	assert.Greater(t, st.FillRatio, max(st.Current.FillRatio, st.Previous.FillRatio))
	assert.InEpsilon(t, 1000, st.ApproximateElementCount, 0.03)
	assert.InDelta(t, 1-(1-cur.ExpectedFPP())*(1-prev.ExpectedFPP()), st.ExpectedFPP, 1e-15)
}

// TestRotatingZeroAllocs requires Put and MightContain to allocate nothing
// with the built-in funnels and both strategies, as a Filter's do.
func TestRotatingZeroAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop items at random, so allocation counts mean nothing; .ci/run also runs the tests without -race")
	}
	rotatingAllocs(t, funnel.Bytes, []byte("some bytes"))
	rotatingAllocs(t, funnel.String, "a string")
	rotatingAllocs(t, funnel.Int64, -42)
	rotatingAllocs(t, funnel.Sequential(funnel.Int64), []int64{1, 2, 3})
}

func rotatingAllocs[T any](t *testing.T, f funnel.Funnel[T], v T) {
	t.Helper()
	for _, s := range []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64} {
		r := mustNewRotating(t, f, 1000, 0.01, time.Hour, bloom.WithStrategy(s))
		assert.Zero(t, testing.AllocsPerRun(1000, func() { r.Put(v) }), "Put %T %v", f, s)
		assert.Zero(t, testing.AllocsPerRun(1000, func() { r.MightContain(v) }), "MightContain %T %v", f, s)
	}
}

// TestRotatingCollected checks that a Rotating nobody references is garbage
// collected although its clock holds a timer for it, and that the timer then
// does nothing.
func TestRotatingCollected(t *testing.T) {
	manual := bloomtest.NewClock(epoch)
	for _, c := range []struct {
		name  string
		opts  []bloom.Option
		clock bloom.Clock
	}{{"manual", []bloom.Option{bloom.WithClock(manual)}, manual}, {"system", nil, nil}} {
		t.Run(c.name, func(t *testing.T) {
			r := mustNewRotating(t, funnel.Int64, 1000, 0.01, time.Hour, c.opts...)
			r.Put(1)
			wp := weak.Make(r)
			r = nil
			runtime.GC()
			assert.Nil(t, wp.Value(), "the Rotating is still reachable")
			if m, ok := c.clock.(*bloomtest.Clock); ok {
				m.Advance(2 * time.Hour) // fires the orphaned timer
			}
		})
	}
}

// TestRotatingFPP measures the false-positive rate over a stream whose
// values drift: each window brings mostly new values and repeats some of the
// last window's. The rate must stay near what Stats predicts and below about
// 2p, the bound in Rotating's documentation, both when windows end first and
// when an overloaded stream fills generations early.
func TestRotatingFPP(t *testing.T) {
	const p = 0.01
	n, probes := int64(20000), int64(40000)
	if testing.Short() {
		n, probes = 5000, 20000
	}
	for _, c := range []struct {
		name      string
		perWindow int64 // new values per window
		early     bool  // whether generations fill before their window ends
	}{
		{"windows end first", n * 85 / 100, false},
		{"overloaded", n * 3, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			const w = time.Minute
			clock := bloomtest.NewClock(epoch)
			r := mustNewRotating(t, funnel.Int64, n, p, w, bloom.WithClock(clock))
			// Values are positive; probes are negative, never put.
			next, probe := int64(1), int64(-1)
			var fps, total int64
			var predicted float64
			for window := range 8 {
				start := next
				for range c.perWindow {
					r.Put(next)
					next++
					// Drift: a tenth of the stream repeats values of
					// the last window, so a generation holds about
					// 0.85n + 0.085n values when its window ends.
					if next%10 == 0 && start > c.perWindow {
						r.Put(start - c.perWindow + next%c.perWindow)
					}
				}
				if window >= 2 { // both generations have filled once
					for range probes {
						if r.MightContain(probe) {
							fps++
						}
						probe--
					}
					total += probes
					predicted += r.Stats().ExpectedFPP
				}
				clock.Advance(w)
			}
			measured := float64(fps) / float64(total)
			predicted /= float64(total / probes)
			st := r.Stats()
			t.Logf("measured %.5f, Stats predicted %.5f, p %v; %d rotations, %d early", measured, predicted, p, st.Rotations, st.EarlyRotations)
			// Four standard deviations of a binomial count, plus 10% for
			// the gap between the estimate and the truth.
			tolerance := 4*math.Sqrt(2*p/float64(total)) + 0.1*2*p
			assert.InDelta(t, predicted, measured, tolerance)
			assert.Less(t, measured, 2*p+tolerance, "above 2p")
			assert.Equal(t, c.early, st.EarlyRotations > 0)
			if !c.early {
				// Just before a rotation both generations are nearly
				// full, so the rate is well above a single filter's p.
				assert.Greater(t, measured, 1.2*p)
			}
		})
	}
}

// TestRotatingConcurrent races Put, MightContain, Stats and WriteTo against
// rotations on count, in the writers, and on time, from a manual clock that
// one writer advances. A value whose Put has returned must be found as long
// as at most one rotation happened since: that is what makes it found for a
// window, and a Put that races with a rotation could break it.
func TestRotatingConcurrent(t *testing.T) {
	const writers, readers = 4, 4
	const n, w = 2000, time.Minute // a generation fills every 2000 new values
	perWriter := int64(40000)
	if testing.Short() || race.Enabled {
		perWriter = 8000
	}
	clock := bloomtest.NewClock(epoch)
	r := mustNewRotating(t, funnel.Int64, n, 0.01, w, bloom.WithClock(clock))

	// A writer publishes one Put in 16, with the rotation count of Stats.
	checked, falseNegatives := bloom.RotationRace{
		Writers: writers, Readers: readers, PerWriter: perWriter, PublishEvery: 16,
		Rotations: func() int64 { return r.Stats().Rotations },
		AfterPut: func(wr, i int64) {
			if wr == 0 && i%(perWriter/10) == 0 {
				clock.Advance(w)
			}
		},
		AfterLookup: func(j int) {
			if j%500 == 0 {
				_, err := r.WriteTo(io.Discard)
				assert.NoError(t, err)
			}
		},
	}.Run(r)

	st := r.Stats()
	t.Logf("%d rotations (%d on count), %d values checked", st.Rotations, st.EarlyRotations, checked)
	assert.Zero(t, falseNegatives, "values put within the last rotation not found")
	assert.Greater(t, checked, int64(100), "too few checks to mean anything")
	// A generation fills every n new values, and the clock moves ten
	// windows; some of either kind of rotation may find the other has just
	// happened.
	assert.GreaterOrEqual(t, st.EarlyRotations, writers*perWriter/n/4, "rotations on count")
	assert.GreaterOrEqual(t, st.Rotations-st.EarlyRotations, int64(5), "rotations on time")
}
