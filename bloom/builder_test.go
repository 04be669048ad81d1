package bloom_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/race"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// TestBuilder fills a Builder from one goroutine, then hands its filter to
// readers and writers on many, and goes on putting through the Builder
// beside them. The race detector, which .ci/run runs, checks that this
// documented use has no race; the bits are those of Put.
func TestBuilder(t *testing.T) {
	const n = 20_000
	for _, s := range []strategy.Strategy{strategy.Murmur128Mitz64, strategy.Murmur128Mitz32} {
		b, err := bloom.NewBuilder(funnel.Int64, n, 0.01, bloom.WithStrategy(s))
		require.NoError(t, err)
		want := mustNew(t, funnel.Int64, n, 0.01, bloom.WithStrategy(s))
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range int64(n / 2) {
				b.Put(i)
			}
			b.PutMany([]int64{n / 2, n/2 + 1, n/2 + 2})
		}()
		<-done
		for i := range int64(n/2 + 3) {
			want.Put(i)
		}
		assert.True(t, b.MightContain(n/2+2))
		f := b.Filter()
		assert.Same(t, f, b.Filter(), "Filter hands over the same filter each time")
		assert.True(t, want.Equal(f), "%v: a Builder sets the bits Put sets", s)

		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int64(g); i < n; i += 4 {
					if i < n/2 && !f.MightContain(i) {
						t.Errorf("MightContain(%d) = false after Put", i)
						return
					}
					f.Put(n + i)
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range int64(n) {
				b.Put(2*n + i)
			}
		}()
		wg.Wait()
		for i := range int64(3 * n) {
			if i < n/2+3 || i >= n {
				require.True(t, f.MightContain(i), "value %d", i)
			}
		}
	}
}

func TestBuilderErrors(t *testing.T) {
	_, err := bloom.NewBuilder[string](nil, 10, 0.01)
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	_, err = bloom.NewBuilder(funnel.String, -5, 0.01)
	assert.EqualError(t, err, "bloom: invalid argument: expected insertions (-5) must be >= 0")
}

func TestBuilderAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop items at random, so allocation counts mean nothing; .ci/run also runs the tests without -race")
	}
	b, err := bloom.NewBuilder(funnel.String, 1000, 0.01)
	require.NoError(t, err)
	vs := []string{"a", "b", "c"}
	assert.Zero(t, testing.AllocsPerRun(1000, func() { b.Put("x") }))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { b.PutMany(vs) }))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { b.MightContain("x") }))
}
