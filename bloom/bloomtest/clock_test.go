package bloomtest_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
)

var _ bloom.Clock = (*bloomtest.Clock)(nil)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestClock checks that Advance runs due functions in the order of
// their times, at their times, including those they set themselves.
func TestClock(t *testing.T) {
	c := bloomtest.NewClock(epoch)
	var got []string
	record := func(name string) func() {
		return func() { got = append(got, name+"@"+c.Now().Sub(epoch).String()) }
	}
	c.AfterFunc(3*time.Second, record("c"))
	c.AfterFunc(time.Second, func() {
		record("a")()
		c.AfterFunc(time.Second, record("b")) // due at 2s, before c
	})
	c.AfterFunc(3*time.Second, record("c2")) // same time as c, set later
	c.AfterFunc(10*time.Second, record("late"))

	c.Advance(500 * time.Millisecond)
	assert.Empty(t, got)
	assert.Equal(t, epoch.Add(500*time.Millisecond), c.Now())

	c.Advance(4 * time.Second)
	assert.Equal(t, []string{"a@1s", "b@2s", "c@3s", "c2@3s"}, got)
	assert.Equal(t, epoch.Add(4500*time.Millisecond), c.Now())

	c.Advance(-time.Hour)
	assert.Equal(t, epoch.Add(4500*time.Millisecond), c.Now(), "a negative Advance moves nothing")

	c.AfterFunc(0, record("now"))
	c.AfterFunc(-time.Second, record("past"))
	c.Advance(0)
	assert.Equal(t, []string{"a@1s", "b@2s", "c@3s", "c2@3s", "now@4.5s", "past@4.5s"}, got)
}

// TestClockZero checks that the zero Clock works.
func TestClockZero(t *testing.T) {
	var c bloomtest.Clock
	fired := false
	c.AfterFunc(time.Minute, func() { fired = true })
	c.Advance(time.Minute)
	assert.True(t, fired)
	assert.Equal(t, time.Time{}.Add(time.Minute), c.Now())
}

// TestClockConcurrent sets timers and reads the time from several
// goroutines while one advances the clock; every timer fires exactly once.
func TestClockConcurrent(t *testing.T) {
	c := bloomtest.NewClock(epoch)
	const goroutines, each = 4, 200
	var mu sync.Mutex
	fired := 0
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				c.AfterFunc(time.Duration(g*each+i)*time.Millisecond, func() {
					mu.Lock()
					fired++
					mu.Unlock()
				})
				_ = c.Now()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 100 {
			c.Advance(time.Millisecond)
		}
	}()
	wg.Wait()
	// Every timer is due within an hour of the latest time it could have
	// been set at.
	c.Advance(time.Hour)
	assert.Equal(t, goroutines*each, fired)
}
