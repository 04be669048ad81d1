package bloom

import (
	"time"

	"github.com/mitzbloom/mitzbloom/strategy"
)

// A Config holds what Options set: a filter's parameters beside its funnel,
// its expected insertions and its false-positive probability. Each field
// says which Option sets it and what it defaults to; [Configure] returns
// the Config that a list of Options makes. Fields may be added in later
// releases, so a Config literal should name its fields.
type Config struct {
	// Strategy maps hashes to bits ([WithStrategy]); the default is
	// [strategy.Murmur128Mitz64].
	Strategy strategy.Strategy
	// LegacyHashCount computes the number of hash functions as Guava 31.x
	// and earlier do ([WithLegacyHashCount]); the default is false, current
	// Guava's rule.
	LegacyHashCount bool
	// UnsynchronizedWrites makes a Filter set bits with plain writes
	// ([WithUnsynchronizedWrites]); the default is false, atomic writes.
	//
	// Deprecated: use [NewBuilder], as WithUnsynchronizedWrites says.
	UnsynchronizedWrites bool
	// Clock is a Rotating's clock ([WithClock]); the default is the
	// system's clock, time.Now and time.AfterFunc.
	Clock Clock
	// Growth is a Scalable's growth factor ([WithGrowth]); the default is
	// 2.
	Growth int
	// Tightening is a Scalable's tightening ratio ([WithTightening]); the
	// default is 0.9.
	Tightening float64
}

// An Option configures [New], [Size], [NewRotating], [ReadRotating],
// [NewScalable] or [ReadScalable] by changing the fields of a [Config]
// that it documents. The With functions below return the Options of this
// package; a func literal of this type is an Option too. Options of other
// packages, such as redisfilter's, have types of their own: given to
// these functions, they do not compile.
type Option func(*Config)

// defaults is the Config that no options make.
var defaults = Config{
	Strategy:   strategy.Murmur128Mitz64,
	Clock:      systemClock{},
	Growth:     2,
	Tightening: 0.9,
}

// Configure returns the Config that opts make from the defaults, applied
// in order, so that a later option overrides an earlier one: the
// parameters New, Size and the others would use. Without options it
// returns the defaults and allocates nothing.
func Configure(opts ...Option) Config {
	if len(opts) == 0 {
		return defaults
	}
	return configure(opts)
}

// configure is Configure with options, apart so that the Config options
// take a pointer to, which escapes to the heap, is allocated only when
// there are options.
func configure(opts []Option) Config {
	c := defaults
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithStrategy selects the strategy that maps hashes to bits. The default is
// [strategy.Murmur128Mitz64], as in all of Guava's public create methods.
func WithStrategy(s strategy.Strategy) Option {
	return func(c *Config) { c.Strategy = s }
}

// WithLegacyHashCount computes the number of hash functions as Guava 31.x
// and earlier do, k = max(1, round(m/n·ln 2)) from the unrounded bit count m,
// instead of current Guava's k = max(1, round(-ln p / ln 2)). The two differ
// only for tiny n (for p = 0.01, at n = 1 and n = 3); use it to build filters
// identical to those of a Java service on Guava 31.x. The default is current
// Guava's rule.
func WithLegacyHashCount() Option {
	return func(c *Config) { c.LegacyHashCount = true }
}

// WithUnsynchronizedWrites makes Put and PutMany set bits with plain memory
// writes instead of atomic ones, for a filter that one goroutine fills. That
// makes filling a filter several times faster on x86-64, where an atomic
// write is a locked instruction that waits for every memory access before it
// (BenchmarkFill). It changes neither the bits a filter sets nor its
// serialized form, and Size ignores it.
//
// The filter is then not safe for concurrent writes, like a map: methods
// that only read it (MightContain, MightContainMany, the counts, Equal,
// Copy, WriteTo, MarshalBinary) may run concurrently with each other, but
// Put, PutMany and PutAll must not run concurrently with any other method.
// A bit set by a write that races another can be silently lost; the race
// detector reports such races. To share a filter filled this way with
// concurrent writers, PutAll it into a filter made without this option.
// [NewRotating] rejects it: a Rotating filter is for concurrent use.
//
// Deprecated: use [NewBuilder], whose type says that it is for one
// goroutine and whose Filter method hands over a filter safe for concurrent
// use, where this option gives a Filter of the same type as a safe one.
// WithUnsynchronizedWrites will be removed in the next release.
func WithUnsynchronizedWrites() Option {
	return func(c *Config) { c.UnsynchronizedWrites = true }
}

// WithClock makes a [Rotating] tell time, and learn that a window has ended,
// with c. The default is the system's clock, time.Now and time.AfterFunc;
// tests pass a [ManualClock]. A Filter has no clock: New and Size ignore it.
func WithClock(clock Clock) Option {
	return func(c *Config) { c.Clock = clock }
}

// WithGrowth sets the growth factor s of a [Scalable]: each stage is sized
// for s times the values of the one before. The default is 2. It must be
// at least 2. A larger factor makes fewer stages, so lookups of absent
// values, which look at every stage, are faster; but the newest stage is
// then larger against the others, and just after it is added, nearly
// empty, the filter takes more bits against a Filter that knew the number
// of values: about 3.2 times at s = 2 and 4.5 at s = 4 (see [Scalable]).
// Other constructors ignore it.
func WithGrowth(s int) Option {
	return func(c *Config) { c.Growth = s }
}

// WithTightening sets the tightening ratio r of a [Scalable]: each stage's
// false-positive rate is r times the one before, and the first is
// fpp·(1−r), so that their sum stays below fpp. The default is 0.9. It must
// be in (0, 1). A smaller r leaves more of fpp to the first stages, which
// then take fewer bits, but each stage then needs 1.44·log₂(1/r) bits a
// value more than the one before, and one more hash function every
// 1/log₂(1/r) stages; a larger r makes the first stages tighter and the
// later ones grow more slowly. Other constructors ignore it.
func WithTightening(r float64) Option {
	return func(c *Config) { c.Tightening = r }
}

// systemClock is the Clock of time.Now and time.AfterFunc, the default.
type systemClock struct{}

func (systemClock) Now() time.Time                      { return time.Now() }
func (systemClock) AfterFunc(d time.Duration, f func()) { time.AfterFunc(d, f) }
