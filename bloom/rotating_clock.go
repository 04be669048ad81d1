package bloom

import "time"

// A Clock tells a [Rotating] the time and wakes it when a window ends.
//
// Rotating reads the clock only when a timer fires, a generation fills, or
// Stats is called, never in Put or MightContain, where reading the time
// could cost more than the Put itself: a timer that fires once a window is
// far cheaper than a clock read per call.
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

// systemClock is the Clock of time.Now and time.AfterFunc, the default.
type systemClock struct{}

func (systemClock) Now() time.Time                      { return time.Now() }
func (systemClock) AfterFunc(d time.Duration, f func()) { time.AfterFunc(d, f) }
