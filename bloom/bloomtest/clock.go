// Package bloomtest provides what tests of code that uses package bloom
// need: a Clock that moves only when the test says, so that a test of code
// that uses a bloom.Rotating steps through its windows without sleeping.
package bloomtest

import (
	"slices"
	"sync"
	"time"
)

// A Clock is a bloom.Clock whose time moves only when Advance is called:
// pass it to bloom.NewRotating with bloom.WithClock, and every rotation
// that an Advance brings about has happened when Advance returns.
//
// A Clock is safe for concurrent use. The zero Clock stands at the zero
// time.Time and is ready to use.
type Clock struct {
	advancing sync.Mutex // held for a whole Advance, so timers fire in order
	mu        sync.Mutex // guards the fields below
	now       time.Time
	timers    []timer
	seq       uint64
}

type timer struct {
	at  time.Time
	seq uint64 // timers due at the same time fire in the order they were set
	f   func()
}

// NewClock returns a Clock that stands at start.
func NewClock(start time.Time) *Clock {
	return &Clock{now: start}
}

// Now returns c's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arranges for f to be called during the Advance that brings c to
// d after its current time, or during the next Advance if d <= 0.
func (c *Clock) AfterFunc(d time.Duration, f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.timers = append(c.timers, timer{at: c.now.Add(max(d, 0)), seq: c.seq, f: f})
}

// Advance moves c forward by d, which must not be negative; a negative d
// moves it by nothing. On the way it calls, in the caller's goroutine, each
// function set with AfterFunc whose time has come, in the order of their
// times, with c's time set to that function's time while it runs; that
// includes functions set by the functions it calls. So advancing by three
// windows at once runs three rotations, just as three single steps would.
// The functions must not call Advance.
func (c *Clock) Advance(d time.Duration) {
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
func (c *Clock) next(target time.Time) (func(), bool) {
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
