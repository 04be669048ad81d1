// Package options holds what the options of package bloom set, so that the
// packages built on bloom take bloom's own options, with one implementation
// of each, beside options of their own.
//
// The redisfilter module imports this package: fields may be added, but
// none removed or changed, or a redisfilter built against an earlier
// version would break.
package options

import (
	"time"

	"github.com/mitzbloom/mitzbloom/strategy"
)

// Settings is what a list of options sets. Options take and return it by
// value, so that applying them allocates nothing and nothing escapes.
type Settings struct {
	Strategy        strategy.Strategy
	LegacyHashCount bool
	PlainWrites     bool
	Clock           Clock
	// Growth and Tightening are a scalable filter's growth factor and
	// tightening ratio.
	Growth     int
	Tightening float64
	// Others are the options of packages built on bloom, in the order
	// given; bloom's own constructors refuse them.
	Others []Other
}

// An Other is an option of a package built on bloom.
type Other struct {
	// Name names the option as its package's users write it, such as
	// "redisfilter.WithShardBytes", for bloom to say what it refuses.
	Name string
	// Value is the package's own; bloom never looks at it.
	Value any
}

// Apply returns the settings opts make, from the defaults: the strategy
// MURMUR128_MITZ_64, current Guava's number of hash functions, atomic
// writes, the system clock, and stages that double in size and tighten
// their rates by 0.9.
func Apply[O ~func(Settings) Settings](opts []O) Settings {
	s := Settings{Strategy: strategy.Murmur128Mitz64, Clock: SystemClock{}, Growth: DefaultGrowth, Tightening: DefaultTightening}
	for _, o := range opts {
		s = o(s)
	}
	return s
}

// The defaults of a scalable filter's growth factor and tightening ratio.
const (
	DefaultGrowth     = 2
	DefaultTightening = 0.9
)

// A Clock is what bloom.Clock is: the time, and timers.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func())
}

// SystemClock is the Clock of time.Now and time.AfterFunc, the default.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc calls time.AfterFunc(d, f).
func (SystemClock) AfterFunc(d time.Duration, f func()) { time.AfterFunc(d, f) }
