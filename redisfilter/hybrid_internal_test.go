package redisfilter

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// localHybrid returns a Hybrid of local with no filter in Redis, for the
// tests and benchmarks of its local side.
func localHybrid[T any](local *bloom.Filter[T]) *Hybrid[T] {
	return &Hybrid[T]{
		remote:  &Filter[T]{c: core[T]{k: local.NumHashFunctions(), bitSize: local.BitSize()}},
		local:   local,
		hash:    raw.HasherFor(raw.Funnel(local)),
		changes: newChangeRings(changeRingSize(local.BitSize())),
	}
}

// TestChangeRing puts values from many goroutines while another drains the
// ring: the hashes drained are those of the values whose Put changed a bit,
// each once.
func TestChangeRing(t *testing.T) {
	local, err := bloom.New(funnel.Int64, 1_000_000, 0.01)
	require.NoError(t, err)
	h := localHybrid(local)
	const writers, per = 8, 20_000
	h.changes = newChangeRings(writers * per) // room for all: no overflow
	var wg sync.WaitGroup
	changed := make([][]int64, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range int64(per) {
				v := int64(w)*per + i
				if h.Put(v) {
					changed[w] = append(changed[w], v)
				}
				assert.False(t, h.Put(v), "a second Put changes nothing")
			}
		})
	}
	seen := map[[2]uint64]int{}
	var overflows int // not require in drain: it also runs off the test's goroutine
	drain := func() {
		drained, overflowed := h.changes.drain(nil)
		if overflowed {
			overflows++
		}
		for _, x := range drained {
			seen[x]++
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			drain()
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-done
	drain()
	require.Zero(t, overflows, "rings with room for every value overflowed")
	// Counted rather than compared whole: a diff of maps this size takes
	// testify minutes.
	want := 0
	for _, vs := range changed {
		for _, v := range vs {
			want++
			h1, h2 := h.hash.Sum128(v)
			if n := seen[[2]uint64{h1, h2}]; n != 1 {
				t.Errorf("value %d: drained %d times, want once", v, n)
			}
		}
	}
	require.Len(t, seen, want, "hashes drained of values whose Put changed nothing")
}

// TestChangeRingOverflow fills small rings: records past their size are
// dropped, and a drain while a value that found its ring full is being set,
// and the next drain after, say so, and return the ones that fit.
func TestChangeRingOverflow(t *testing.T) {
	r := newChangeRings(10) // 2 slots a ring
	var full []*changeRing
	for i := range uint64(40) {
		if f := r.record(i, i); f != nil { // to ring i%8: 5 records each
			full = append(full, f)
		}
	}
	require.Len(t, full, 24, "the records past 2 a ring")
	hs, overflowed := r.drain(nil)
	assert.True(t, overflowed, "a drain while the values are being set")
	var want [][2]uint64
	for ring := range uint64(ringCount) {
		want = append(want, [2]uint64{ring, ring}, [2]uint64{ring + 8, ring + 8})
	}
	assert.Equal(t, want, hs, "the first two of each ring")
	for _, f := range full {
		f.settle()
	}
	hs, overflowed = r.drain(nil)
	assert.True(t, overflowed, "the drain after the values are set")
	assert.Empty(t, hs)
	assert.Nil(t, r.record(100, 100))
	hs, overflowed = r.drain(nil)
	assert.False(t, overflowed, "the overflow is reported until a drain after the values are set")
	assert.Equal(t, [][2]uint64{{100, 100}}, hs)
}

// BenchmarkHybridPut compares a Hybrid's Put of new values, which records
// the hash of each in the rings while another goroutine drains them every
// 10 ms, as Syncs do far less often, with what the Put of the releases
// before did: the local filter's Put and a flag. Each run puts into a new,
// empty filter, from 2 goroutines.
func BenchmarkHybridPut(b *testing.B) {
	for _, n := range []int64{1_000_000, 100_000_000} {
		for _, variant := range []string{"before", "delta"} {
			b.Run(fmt.Sprintf("n=%.0e/put=%s", float64(n), variant), func(b *testing.B) {
				local, err := bloom.New(funnel.Int64, n, 0.01)
				require.NoError(b, err)
				h := localHybrid(local)
				var dirty atomic.Bool
				var seq atomic.Int64
				stop := make(chan struct{})
				var wg sync.WaitGroup
				if variant == "delta" {
					wg.Go(func() {
						var hs [][2]uint64
						for {
							hs, _ = h.changes.drain(hs[:0])
							select {
							case <-stop:
								return
							case <-time.After(10 * time.Millisecond):
							}
						}
					})
				}
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						v := seq.Add(1)
						if variant == "delta" {
							h.Put(v)
						} else if local.Put(v) && !dirty.Load() {
							dirty.Store(true)
						}
					}
				})
				b.StopTimer()
				close(stop)
				wg.Wait()
			})
		}
	}
}
