package bloom_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/race"
)

// clearable is what the three filter types have in common for the tests of
// Clear.
type clearable interface {
	Put(int64) bool
	MightContain(int64) bool
	Clear()
	ExpectedFPP() float64
}

// rotatingFPP and scalableFPP give a Rotating and a Scalable the
// ExpectedFPP method a Filter has.
type (
	rotatingFPP struct{ *bloom.Rotating[int64] }
	scalableFPP struct{ *bloom.Scalable[int64] }
)

func (r rotatingFPP) ExpectedFPP() float64 { return r.Stats().ExpectedFPP }
func (s scalableFPP) ExpectedFPP() float64 { return s.Stats().ExpectedFPP }

// clearables returns a new filter of each type, for about n values.
func clearables(t *testing.T, n int64) map[string]clearable {
	return map[string]clearable{
		"Filter":   mustNew(t, funnel.Int64, n, 0.01),
		"Rotating": rotatingFPP{mustNewRotating(t, funnel.Int64, n, 0.01, time.Hour)},
		// Sized for fewer values than it gets, so that it grows.
		"Scalable": scalableFPP{mustNewScalable(t, funnel.Int64, n/16, 0.01)},
	}
}

// TestClear requires a cleared filter to hold nothing, whatever it held,
// and to take values again as a new one does.
func TestClear(t *testing.T) {
	const n = 5000
	for name, f := range clearables(t, n) {
		t.Run(name, func(t *testing.T) {
			for round := range 3 {
				for i := range int64(n) {
					f.Put(i)
				}
				require.Positive(t, f.ExpectedFPP(), "round %d", round)
				f.Clear()
				assert.Zero(t, f.ExpectedFPP(), "round %d: bits are left after Clear", round)
				for i := range int64(2 * n) {
					if f.MightContain(i) {
						t.Fatalf("round %d: %d found after Clear", round, i)
					}
				}
				for i := range int64(n) {
					f.Put(i)
				}
				for i := range int64(n) {
					require.True(t, f.MightContain(i), "round %d: %d put after Clear is not found", round, i)
				}
				f.Clear()
			}
		})
	}
}

func TestFilterClearEqualsNew(t *testing.T) {
	f := putAll(mustNew(t, funnel.String, 1000, 0.01), "a", "b", "c")
	f.Clear()
	assert.True(t, f.Equal(mustNew(t, funnel.String, 1000, 0.01)), "a cleared filter is a new one")
	assert.Zero(t, f.BitCount())
	assert.Zero(t, f.ApproximateElementCount())
	if !race.Enabled {
		assert.Zero(t, testing.AllocsPerRun(10, f.Clear))
	}
}

// TestScalableClearReturnsToOneStage grows a Scalable to several stages,
// clears it, and requires one empty stage, sized as a new Scalable's
// first, that grows again as a new one would.
func TestScalableClearReturnsToOneStage(t *testing.T) {
	s := mustNewScalable(t, funnel.Int64, 1000, 0.01)
	fresh := mustNewScalable(t, funnel.Int64, 1000, 0.01)
	for i := range int64(20000) {
		s.Put(i)
	}
	require.Greater(t, len(s.Stats().Stages), 3)
	s.Clear()
	assert.Equal(t, fresh.Stats(), s.Stats())
	assert.Zero(t, s.ApproximateElementCount())
	for i := range int64(20000) {
		s.Put(i)
		fresh.Put(i)
	}
	assert.Equal(t, fresh.Stats(), s.Stats(), "a cleared Scalable grows as a new one does")
}

func TestRotatingClearStartsAWindow(t *testing.T) {
	r := mustNewRotating(t, funnel.Int64, 1000, 0.01, time.Hour)
	for i := range int64(3000) { // fills the generations, rotating twice
		r.Put(i)
	}
	before := r.Stats()
	require.Equal(t, int64(2), before.Rotations)
	r.Clear()
	after := r.Stats()
	assert.Equal(t, before.Rotations, after.Rotations, "Clear is not a rotation")
	assert.Equal(t, before.EarlyRotations, after.EarlyRotations)
	assert.Zero(t, after.Current.Inserts)
	assert.Zero(t, after.Previous.Inserts)
	assert.Zero(t, after.ExpectedFPP)
	assert.Zero(t, after.ApproximateElementCount)
	assert.Less(t, after.Current.Age, time.Minute, "the current generation starts at Clear")
	// The generations fill again from empty: 999 values rotate nothing.
	for i := range int64(999) {
		r.Put(i)
	}
	assert.Equal(t, before.Rotations, r.Stats().Rotations)
}

// TestClearConcurrent races Clear against Put and MightContain from many
// goroutines, under the race detector in CI, and checks what Clear
// promises: a value whose Put began after a Clear returned, with no Clear
// begun since, is found.
func TestClearConcurrent(t *testing.T) {
	const writers, readers = 4, 4
	perWriter := int64(20000)
	if testing.Short() {
		perWriter = 4000
	}
	for name, f := range clearables(t, writers*perWriter) {
		t.Run(name, func(t *testing.T) {
			var begun, returned atomic.Int64 // Clears
			type mark struct{ v, clears int64 }
			published := make([]atomic.Pointer[mark], writers)
			var checked, lost, clears atomic.Int64

			// The readers start first, and all yield now and then, so
			// that lookups run beside Puts and Clears even on a machine
			// busy with other work.
			var writing, reading, ready sync.WaitGroup
			done := make(chan struct{})
			for r := range readers {
				reading.Add(1)
				ready.Add(1)
				go func() {
					defer reading.Done()
					ready.Done()
					for j := 0; ; j++ {
						select {
						case <-done:
							return
						default:
						}
						m := published[(r+j)%writers].Load()
						if m == nil || j%64 == 0 {
							runtime.Gosched()
						}
						if m == nil {
							continue
						}
						found := f.MightContain(m.v)
						// Only while no Clear has begun since the Put
						// began, which an answer read first cannot see.
						if begun.Load() == m.clears {
							checked.Add(1)
							if !found {
								lost.Add(1)
							}
						}
					}
				}()
			}
			ready.Wait()
			for w := range int64(writers) {
				writing.Add(1)
				go func() {
					defer writing.Done()
					for i := range perWriter {
						if i%2000 == w*500 {
							// The writers take turns to clear, so that
							// Clears run beside Puts and lookups.
							begun.Add(1)
							f.Clear()
							returned.Add(1)
							clears.Add(1)
						}
						if i%256 == 0 {
							runtime.Gosched()
						}
						v := w*perWriter + i
						// No Clear was running when this Put began if all
						// begun by now had returned.
						b := begun.Load()
						quiet := b == returned.Load()
						f.Put(v)
						if quiet {
							published[w].Store(&mark{v, b})
						}
					}
				}()
			}
			writing.Wait()
			close(done)
			reading.Wait()

			t.Logf("%d clears; %d lookups of values put since the last, %d not found", clears.Load(), checked.Load(), lost.Load())
			assert.Zero(t, lost.Load(), "values put after a Clear returned were not found")
			assert.Positive(t, checked.Load(), "no lookup was checked: the test tests nothing")
			assert.Positive(t, clears.Load())

			// Quiet again: a Clear empties it, and it takes values again.
			f.Clear()
			assert.Zero(t, f.ExpectedFPP())
			if s, ok := f.(scalableFPP); ok {
				assert.Len(t, s.Stats().Stages, 1, "a cleared Scalable has one stage")
			}
			for i := range writers * perWriter {
				f.Put(i)
			}
			for i := range writers * perWriter {
				if !f.MightContain(i) {
					t.Fatalf("%d put after the race is not found", i)
				}
			}
		})
	}
}
