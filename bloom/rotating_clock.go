package bloom

import (
	"slices"
	"sync"
	"time"
)

// A Clock tells a [Rotating] the time and wakes it when a window ends.
//
// Rotating reads the clock only when a timer fires, a generation fills, or
// Stats is called, never in Put or MightContain: under virtualization
// reading the time can cost more than a Put (bench/results/choices.md), so
// a timer that fires once a window is far cheaper than a clock read per
// call.
//
// A Clock must be safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc arranges for f to be called once, in a goroutine of the
	// clock's choosing, when d has elapsed; as soon as possible if d <= 0.
	// f may call Now and AfterFunc.
	AfterFunc(d time.Duration, f func())
}

// A ManualClock is a [Clock] whose time moves only when Advance is called,
// for tests of code that uses a [Rotating]: a test can step through windows
// without sleeping, and every rotation they cause has happened when Advance
// returns.
//
// A ManualClock is safe for concurrent use. The zero ManualClock stands at
// the zero time.Time and is ready to use.
type ManualClock struct {
	advancing sync.Mutex // held for a whole Advance, so timers fire in order
	mu        sync.Mutex // guards the fields below
	now       time.Time
	timers    []manualTimer
	seq       uint64
}

type manualTimer struct {
	at  time.Time
	seq uint64 // timers due at the same time fire in the order they were set
	f   func()
}

// NewManualClock returns a ManualClock that stands at start.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start}
}

// Now returns c's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arranges for f to be called during the Advance that brings c to
// d after its current time, or during the next Advance if d <= 0.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.timers = append(c.timers, manualTimer{at: c.now.Add(max(d, 0)), seq: c.seq, f: f})
}

// Advance moves c forward by d, which must not be negative; a negative d
// moves it by nothing. On the way it calls, in the caller's goroutine, each
// function set with AfterFunc whose time has come, in the order of their
// times, with c's time set to that function's time while it runs; that
// includes functions set by the functions it calls. So advancing by three
// windows at once runs three rotations, just as three single steps would.
// The functions must not call Advance.
func (c *ManualClock) Advance(d time.Duration) {
	c.advancing.Lock()
	defer c.advancing.Unlock()
	c.mu.Lock()
	target := c.now.Add(max(d, 0))
	c.mu.Unlock()
	for {
		f, ok := c.next(target)
		if !ok {
			return
		}
		f()
	}
}

// next removes and returns the earliest timer due by target, setting the
// time to its time, or sets the time to target if none is due.
func (c *ManualClock) next(target time.Time) (func(), bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := -1
	for i, t := range c.timers {
		if t.at.After(target) {
			continue
		}
		if first < 0 || t.at.Before(c.timers[first].at) || t.at.Equal(c.timers[first].at) && t.seq < c.timers[first].seq {
			first = i
		}
	}
	if first < 0 {
		c.now = target
		return nil, false
	}
	t := c.timers[first]
	c.timers = slices.Delete(c.timers, first, first+1)
	if t.at.After(c.now) {
		c.now = t.at
	}
	return t.f, true
}
