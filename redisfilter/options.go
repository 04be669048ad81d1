package redisfilter

import (
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// An Option configures Open and OpenWindowed.
type Option func(*options)

type options struct {
	strategy   strategy.Strategy
	legacy     bool
	funnelName string
	now        func() time.Time
}

// WithStrategy selects the strategy that maps hashes to bits, as
// [bloom.WithStrategy] does. The default is strategy.Murmur128Mitz64.
func WithStrategy(s strategy.Strategy) Option {
	return func(o *options) { o.strategy = s }
}

// WithLegacyHashCount computes the number of hash functions as Guava 31.x
// does, as [bloom.WithLegacyHashCount] does. The default is current Guava's
// rule.
func WithLegacyHashCount() Option {
	return func(o *options) { o.legacy = true }
}

// WithFunnelName sets the funnel's name recorded in the filter's config key.
// Replicas that open the filter must use the same name, which stands for the
// funnel since a funnel cannot be stored. The default is the funnel's String
// method, as in "funnel.String"; funnels without one, such as a
// [funnel.Func], need a name, since what fmt prints for a function differs
// between builds.
func WithFunnelName(name string) Option {
	return func(o *options) { o.funnelName = name }
}

// WithClock sets the clock a [Windowed] filter derives its generations from.
// The default is time.Now. Open ignores it.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

func (o *options) sizing() []bloom.Option {
	opts := []bloom.Option{bloom.WithStrategy(o.strategy)}
	if o.legacy {
		opts = append(opts, bloom.WithLegacyHashCount())
	}
	return opts
}
