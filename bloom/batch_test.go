package bloom_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/probe"
	"github.com/mitzbloom/mitzbloom/internal/race"
	"github.com/mitzbloom/mitzbloom/strategy"
)

var bothStrategies = []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64}

// TestBatchMatchesOneByOne requires PutMany to set exactly the bits a loop of
// Put sets, and MightContainMany to give MightContain's answers, for slice
// lengths around the batch size, both strategies and write modes, filters
// from one word (where values share most bits) to many, and values put more
// than once.
func TestBatchMatchesOneByOne(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	lengths := []int{0, 1, 2, probe.BatchSize - 1, probe.BatchSize, probe.BatchSize + 1, 3*probe.BatchSize + 5, 5000}
	for _, s := range bothStrategies {
		// 8e6 keys is a filter of 9.6 MB, large enough for the batch calls
		// to prefetch.
		for _, n := range []int64{1, 50, 1000, 100_000, 8_000_000} {
			for _, length := range lengths {
				if n == 8_000_000 && length < probe.BatchSize {
					continue
				}
				for _, m := range writeModes {
					name := fmt.Sprintf("%v/n=%d/len=%d/%s", s, n, length, m.name)
					one := mustNew(t, funnel.String, n, 0.01, bloom.WithStrategy(s))
					many := mustNewMode(t, m, funnel.String, n, 0.01, bloom.WithStrategy(s))
					vs := make([]string, length)
					for i := range vs {
						vs[i] = fmt.Sprint(r.IntN(2 * length))
					}
					for _, v := range vs {
						one.Put(v)
					}
					many.PutMany(vs)
					require.True(t, many.Equal(one), "%s: PutMany set different bits", name)

					probes := make([]string, length)
					want := []bool{true, false} // answers already in dst stay
					for i := range probes {
						probes[i] = fmt.Sprint(r.IntN(4 * length))
						want = append(want, one.MightContain(probes[i]))
					}
					got := many.MightContainMany([]bool{true, false}, probes)
					require.Equal(t, want, got, name)
				}
			}
		}
	}
}

// TestBatchConcurrent runs PutMany from 8 goroutines on overlapping ranges
// while others run MightContainMany, and requires the result to equal the
// filter built sequentially, with no false negative for any batch put
// before a lookup started.
func TestBatchConcurrent(t *testing.T) {
	const goroutines = 8
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	values := make([]int64, n)
	for i := range values {
		values[i] = int64(i) * 7919
	}
	for _, s := range bothStrategies {
		concurrent := mustNew(t, funnel.Int64, int64(n), 0.01, bloom.WithStrategy(s))
		sequential := mustNew(t, funnel.Int64, int64(n), 0.01, bloom.WithStrategy(s))
		for _, v := range values {
			sequential.Put(v)
		}
		// The first tenth is put before anyone reads, so readers must
		// always find it.
		concurrent.PutMany(values[:n/10])
		var wg sync.WaitGroup
		falseNegatives := make([]int, goroutines)
		for g := range goroutines {
			wg.Add(2)
			go func() {
				defer wg.Done()
				chunk := n / goroutines
				from, to := g*chunk, min(n, (g+1)*chunk+chunk/2)
				for lo := from; lo < to; lo += 100 {
					concurrent.PutMany(values[lo:min(lo+100, to)])
				}
			}()
			go func() {
				defer wg.Done()
				var answers []bool
				for range 5 {
					answers = concurrent.MightContainMany(answers[:0], values[:n/10])
					for _, a := range answers {
						if !a {
							falseNegatives[g]++
						}
					}
				}
			}()
		}
		wg.Wait()
		assert.Equal(t, make([]int, goroutines), falseNegatives, "%v", s)
		assert.True(t, concurrent.Equal(sequential), "%v: concurrent PutMany lost bits", s)
	}
}

// TestBatchZeroAllocs requires the batch calls to allocate nothing with the
// built-in funnels when dst has room.
func TestBatchZeroAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector changes allocation counts; .ci/run also runs the tests without -race")
	}
	for _, s := range bothStrategies {
		for _, m := range writeModes {
			ints := mustNewMode(t, m, funnel.Int64, 1000, 0.01, bloom.WithStrategy(s))
			strs := mustNewMode(t, m, funnel.String, 1000, 0.01, bloom.WithStrategy(s))
			iv := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33}
			sv := []string{"a", "bb", "ccc", "10.0.0.1:443"}
			dst := make([]bool, 0, 64)
			assert.Zero(t, testing.AllocsPerRun(100, func() { ints.PutMany(iv) }), "PutMany int64 %v %s", s, m.name)
			assert.Zero(t, testing.AllocsPerRun(100, func() { strs.PutMany(sv) }), "PutMany string %v %s", s, m.name)
			assert.Zero(t, testing.AllocsPerRun(100, func() { dst = ints.MightContainMany(dst[:0], iv) }), "MightContainMany int64 %v %s", s, m.name)
			assert.Zero(t, testing.AllocsPerRun(100, func() { dst = strs.MightContainMany(dst[:0], sv) }), "MightContainMany string %v %s", s, m.name)
		}
	}
}
