package bloom_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// TestConcurrentPut builds one filter from 8 goroutines, putting overlapping
// and disjoint ranges, and requires it to equal, bit for bit, the filter
// built sequentially from the same values.
func TestConcurrentPut(t *testing.T) {
	const goroutines = 8
	n := int64(200000)
	if testing.Short() {
		n = 20000
	}
	for _, s := range []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64} {
		concurrent := mustNew(t, funnel.Int64, n, 0.01, bloom.WithStrategy(s))
		sequential := mustNew(t, funnel.Int64, n, 0.01, bloom.WithStrategy(s))
		for i := range n {
			sequential.Put(i)
		}
		var wg sync.WaitGroup
		for g := range int64(goroutines) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each goroutine puts its own eighth and half of its
				// neighbour's, so every value is put by one or two of them.
				chunk := n / goroutines
				from, to := g*chunk, (g+1)*chunk+chunk/2
				if g == goroutines-1 {
					to = n
				}
				for i := from; i < min(to, n); i++ {
					concurrent.Put(i)
				}
			}()
		}
		wg.Wait()
		assert.True(t, concurrent.Equal(sequential), "%v: concurrent puts lost bits", s)
		assert.Equal(t, sequential.BitCount(), concurrent.BitCount())
		assert.Equal(t, sequential.ApproximateElementCount(), concurrent.ApproximateElementCount())
	}
}

// TestConcurrentReadWrite races MightContain, the statistics, Copy,
// MarshalBinary, MarshalText and PutAll against Put. A value whose Put has returned is always found.
func TestConcurrentReadWrite(t *testing.T) {
	const writers, readers = 4, 4
	n := int64(20000)
	if testing.Short() {
		n = 4000
	}
	f := mustNew(t, funnel.Int64, n*writers, 0.01)
	other := putAll(mustNew(t, funnel.Int64, n*writers, 0.01), -1, -2, -3)
	var published [writers]atomic.Int64 // values below are put
	var wg sync.WaitGroup
	var falseNegatives atomic.Int64
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				f.Put(int64(w)*n + i)
				published[w].Store(i + 1)
			}
		}()
	}
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < int(n); j++ {
				w := (r + j) % writers
				if upTo := published[w].Load(); upTo > 0 && !f.MightContain(int64(w)*n+upTo-1) {
					falseNegatives.Add(1)
				}
				switch j % 1000 {
				case 0:
					_ = f.ApproximateElementCount()
					_ = f.ExpectedFPP()
				case 1:
					_ = f.Copy()
				case 2:
					_, _ = f.MarshalBinary()
				case 3:
					_ = f.PutAll(other)
				case 4:
					_, _ = f.MarshalText()
				}
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, falseNegatives.Load())
	for i := range n * writers {
		if !f.MightContain(i) {
			t.Fatalf("value %d was put but is not found", i)
		}
	}
	assert.True(t, f.MightContain(-2))
}
