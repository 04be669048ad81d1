package bloom_test

import (
	"bytes"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/probe"
	"github.com/mitzbloom/mitzbloom/internal/race"
)

// seqFilter is what the three filter types have in common for the tests
// of the iterator methods.
type seqFilter[T any] interface {
	Put(T) bool
	MightContain(T) bool
	PutMany([]T)
	MightContainMany([]bool, []T) []bool
	PutSeq(iter.Seq[T])
	MightContainSeq(iter.Seq[T]) iter.Seq2[T, bool]
	WriteTo(io.Writer) (int64, error)
}

// seqFilters returns two new filters of each type, alike, for about n
// values; the Scalable ones grow past n/4.
func seqFilters(t *testing.T, n int64) map[string][2]seqFilter[string] {
	out := map[string][2]seqFilter[string]{}
	for i := range 2 {
		for name, f := range map[string]seqFilter[string]{
			"Filter":   mustNew(t, funnel.String, n, 0.01),
			"Rotating": mustNewRotating(t, funnel.String, n, 0.01, time.Hour),
			"Scalable": mustNewScalable(t, funnel.String, max(n/4, 1), 0.01),
		} {
			pair := out[name]
			pair[i] = f
			out[name] = pair
		}
	}
	return out
}

func serialized[T any](t *testing.T, f seqFilter[T]) []byte {
	t.Helper()
	var b bytes.Buffer
	_, err := f.WriteTo(&b)
	require.NoError(t, err)
	return b.Bytes()
}

// TestSeqMatchesMany requires PutSeq to leave the bits PutMany leaves, and
// MightContainSeq to yield each value with MightContainMany's answer, in
// order, for sequences around the batch size, on filters in the caches and
// larger than them.
func TestSeqMatchesMany(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	lengths := []int{0, 1, probe.BatchSize - 1, probe.BatchSize, probe.BatchSize + 1, 3*probe.BatchSize + 5, 5000}
	for _, n := range []int64{1000, 8_000_000} {
		if n > 1000 && testing.Short() {
			continue
		}
		for name, pair := range seqFilters(t, n) {
			many, seq := pair[0], pair[1]
			for _, length := range lengths {
				what := fmt.Sprintf("%s/n=%d/len=%d", name, n, length)
				vs := make([]string, length)
				for i := range vs {
					vs[i] = fmt.Sprint(r.IntN(4 * length))
				}
				many.PutMany(vs)
				seq.PutSeq(slices.Values(vs))
				require.Equal(t, serialized(t, many), serialized(t, seq), "%s: PutSeq set other bits than PutMany", what)

				probes := make([]string, length)
				for i := range probes {
					probes[i] = fmt.Sprint(r.IntN(8 * length))
				}
				want := many.MightContainMany(nil, probes)
				var gotValues []string
				var got []bool
				for v, ok := range seq.MightContainSeq(slices.Values(probes)) {
					gotValues = append(gotValues, v)
					got = append(got, ok)
				}
				require.True(t, slices.Equal(probes, gotValues), "%s: values yielded", what)
				require.True(t, slices.Equal(want, got), "%s: answers differ from MightContainMany's", what)
			}
		}
	}
}

// TestMightContainSeqStops requires a loop that breaks out of
// MightContainSeq to stop the sequence it reads, at most a batch ahead,
// and a sequence that is itself cut short to end the loop.
func TestMightContainSeqStops(t *testing.T) {
	for name, pair := range seqFilters(t, 1000) {
		f := pair[0]
		f.Put("7")
		read := 0
		endless := func(yield func(string) bool) {
			for i := 0; ; i++ {
				read++
				if !yield(fmt.Sprint(i)) {
					return
				}
			}
		}
		looked := 0
		for v, ok := range f.MightContainSeq(endless) {
			looked++
			if v == "7" {
				assert.True(t, ok, name)
			}
			if looked == 300 {
				break
			}
		}
		assert.Equal(t, 300, looked, name)
		assert.LessOrEqual(t, read, 300+probe.BatchSize, "%s: read too far ahead", name)

		// The same sequence value can be ranged over again.
		values := f.MightContainSeq(slices.Values([]string{"7", "x"}))
		for range 2 {
			got := map[string]bool{}
			for v, ok := range values {
				got[v] = ok
			}
			assert.Equal(t, map[string]bool{"7": true, "x": f.MightContain("x")}, got, name)
		}
	}
}

// TestSeqDedupeLoop shows the order of lookups and Puts in a loop that puts
// what it did not find: within a batch, a value repeated is looked up
// before the loop puts its first occurrence.
func TestSeqDedupeLoop(t *testing.T) {
	f := mustNew(t, funnel.String, 1000, 0.01)
	vs := []string{"a", "b", "a"}
	var fresh []string
	for v, ok := range f.MightContainSeq(slices.Values(vs)) {
		if !ok {
			f.Put(v)
			fresh = append(fresh, v)
		}
	}
	assert.Equal(t, vs, fresh, "the second a was looked up with the first, before its Put")
}

// TestSeqConcurrent runs PutSeq from several goroutines beside
// MightContainSeq readers, under the race detector in CI, and requires
// the result to equal the filter built by PutMany.
func TestSeqConcurrent(t *testing.T) {
	const goroutines = 4
	n := 40_000
	if testing.Short() {
		n = 8000
	}
	values := make([]string, n)
	for i := range values {
		values[i] = fmt.Sprint(i)
	}
	for name, pair := range seqFilters(t, int64(n)) {
		concurrent, sequential := pair[0], pair[1]
		sequential.PutMany(values[:n/10])
		concurrent.PutSeq(slices.Values(values[:n/10]))
		var wg sync.WaitGroup
		falseNegatives := make([]int, goroutines)
		for g := range goroutines {
			wg.Add(2)
			go func() {
				defer wg.Done()
				concurrent.PutSeq(slices.Values(values[g*n/goroutines : (g+1)*n/goroutines]))
			}()
			go func() {
				defer wg.Done()
				for range 3 {
					for _, ok := range concurrent.MightContainSeq(slices.Values(values[:n/10])) {
						if !ok {
							falseNegatives[g]++
						}
					}
				}
			}()
		}
		wg.Wait()
		assert.Equal(t, make([]int, goroutines), falseNegatives, name)
		for _, v := range values {
			require.True(t, concurrent.MightContain(v), "%s: %s put but not found", name, v)
		}
		if name == "Filter" {
			sequential.PutMany(values)
			assert.Equal(t, serialized(t, sequential), serialized(t, concurrent), "%s: concurrent PutSeq lost bits", name)
		}
	}
}

// TestSeqAllocs requires the iterator methods to allocate nothing per
// value with the built-in funnels: as much for a sequence of 10,000 values
// as for one of 10, and little.
func TestSeqAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop items at random, so allocation counts mean nothing; .ci/run also runs the tests without -race")
	}
	long := benchKeys(10_000, hostPort)
	short := long[:10]
	for name, pair := range seqFilters(t, 100_000) {
		f := pair[0]
		allocs := func(vs []string) (put, contain float64) {
			seq := slices.Values(vs)
			put = testing.AllocsPerRun(20, func() { f.PutSeq(seq) })
			contain = testing.AllocsPerRun(20, func() {
				for range f.MightContainSeq(seq) {
				}
			})
			return put, contain
		}
		shortPut, shortContain := allocs(short)
		longPut, longContain := allocs(long)
		t.Logf("%s: PutSeq %v allocations, MightContainSeq %v", name, shortPut, shortContain)
		assert.Equal(t, shortPut, longPut, "%s: PutSeq allocates per value", name)
		assert.Equal(t, shortContain, longContain, "%s: MightContainSeq allocates per value", name)
		// A range over a function allocates its body and its state: PutSeq's
		// over seq, and here the loop's over MightContainSeq's, which adds
		// its own range, its buffer and the sequence it returns (6 with Go
		// 1.26, 7 with Go 1.24, whose compiler keeps one more on the heap).
		assert.LessOrEqual(t, shortPut, 2.0, name)
		assert.LessOrEqual(t, shortContain, 7.0, name)
	}
}
