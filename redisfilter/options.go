package redisfilter

import (
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// An Option configures Open and OpenWindowed.
type Option func(*options)

type options struct {
	strategy      strategy.Strategy
	legacy        bool
	clock         bloom.Clock
	allowEviction bool
	recreate      bool
	adopt         bool
	shardBytes    int64
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

// WithClock sets the clock a [Windowed] filter derives its generations from,
// as [bloom.WithClock] does for a [bloom.Rotating]; only its Now method is
// used. The default is the system clock; tests pass a [bloom.ManualClock].
// Open ignores it.
func WithClock(c bloom.Clock) Option {
	return func(o *options) { o.clock = c }
}

// WithEvictionAllowed lets Open and OpenWindowed use a server whose
// maxmemory-policy may evict the filter's keys, which they refuse otherwise
// with an error wrapping [ErrEvictable]. Evicted bits are then reported as
// errors wrapping [ErrLost], never as false answers.
func WithEvictionAllowed() Option {
	return func(o *options) { o.allowEviction = true }
}

// WithRecreate lets Open start a lost filter again, empty: one whose config
// key exists but whose bitmap is gone. Without it Open returns an error
// wrapping [ErrLost]. Every other Filter of the name then gets errors
// wrapping ErrLost, never empty answers, until it is opened again.
func WithRecreate() Option {
	return func(o *options) { o.recreate = true }
}

// WithAdopt lets Open take an existing bitmap whose config key is gone as
// the filter's, if its length is the one the parameters give, and write the
// config key again. Without it Open returns an error wrapping [ErrLost]. Only
// the length can be checked: adopt a bitmap only if it was created with the
// same parameters. OpenWindowed adopts the recorded generations likewise.
func WithAdopt() Option {
	return func(o *options) { o.adopt = true }
}

// WithShardBytes stores the filter in shards of n bytes each (the last may
// be shorter), each a Redis string in its own hash slot, so that a Redis
// Cluster spreads the filter, its memory and its work over its nodes. n must
// be a positive multiple of 8 and at most 512 MiB, Redis's limit for a
// string; an n at least the filter's size keeps it in one string. Without
// it a filter of up to 16 MiB is one string, and a larger one is sharded in
// shards of 16 MiB, which Redis creates in about 10 ms each. The shard size
// is part of the filter's parameters: every process must open it with the
// same.
func WithShardBytes(n int64) Option {
	return func(o *options) { o.shardBytes = n }
}

func (o *options) sizing() []bloom.Option {
	opts := []bloom.Option{bloom.WithStrategy(o.strategy)}
	if o.legacy {
		opts = append(opts, bloom.WithLegacyHashCount())
	}
	return opts
}

// systemClock is the default clock of a Windowed filter.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) { time.AfterFunc(d, f) }
