package bloom

import (
	"time"

	"github.com/mitzbloom/mitzbloom/strategy"
)

// An Option configures [New], [Size], [NewBuilder], [NewRotating],
// [ReadRotating], [NewScalable] or [ReadScalable]. The With functions of
// this package return them; each says which of those functions it applies
// to and what it defaults to.
type Option func(*config)

// config is what a list of Options sets.
type config struct {
	strategy        strategy.Strategy
	strategySet     bool // set by WithStrategy, which ReadRotating and ReadScalable check against the bytes
	legacyHashCount bool
	clock           Clock
	growth          int
	tightening      float64
	// sized, n and fpp are WithSizing's, for ReadRotating and ReadScalable.
	sized bool
	n     int64
	fpp   float64
	// windowSet and window are WithWindow's, for ReadRotating.
	windowSet bool
	window    time.Duration
}

// defaults is the config that no options make.
var defaults = config{
	strategy:   strategy.Murmur128Mitz64,
	clock:      systemClock{},
	growth:     2,
	tightening: 0.9,
}

// configure returns the config that opts make from the defaults, applied
// in order, so that a later option overrides an earlier one. Without
// options it returns the defaults and allocates nothing.
func configure(opts []Option) config {
	if len(opts) == 0 {
		return defaults
	}
	return configureSome(opts)
}

// configureSome is configure with options, apart so that the config the
// options take a pointer to, which escapes to the heap, is allocated only
// when there are options.
func configureSome(opts []Option) config {
	c := defaults
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithStrategy selects the strategy that maps hashes to bits. The default is
// [strategy.Murmur128Mitz64], as in all of Guava's public create methods.
// [ReadRotating] and [ReadScalable] take the strategy from the filters they
// read, and return an error wrapping [ErrIncompatible] if it is not s.
func WithStrategy(s strategy.Strategy) Option {
	return func(c *config) { c.strategy, c.strategySet = s, true }
}

// WithLegacyHashCount computes the number of hash functions as Guava 31.x
// and earlier do, k = max(1, round(m/n·ln 2)) from the unrounded bit count m,
// instead of current Guava's k = max(1, round(-ln p / ln 2)). The two differ
// only for tiny n (for p = 0.01, at n = 1 and n = 3); use it to build filters
// identical to those of a Java service on Guava 31.x. The default is current
// Guava's rule.
func WithLegacyHashCount() Option {
	return func(c *config) { c.legacyHashCount = true }
}

// WithClock makes a [Rotating] tell time, and learn that a window has ended,
// with clock. The default is the system's clock, time.Now and
// time.AfterFunc; tests pass one that they move by hand, such as
// [github.com/mitzbloom/mitzbloom/bloom/bloomtest.Clock]. Functions that
// make no Rotating ignore it.
func WithClock(clock Clock) Option {
	return func(c *config) { c.clock = clock }
}

// WithGrowth sets the growth factor s of a [Scalable]: each stage is sized
// for s times the values of the one before. The default is 2. It must be
// at least 2. A larger factor makes fewer stages, so lookups of absent
// values, which look at every stage, are faster; but the newest stage is
// then larger against the others, and just after it is added, nearly
// empty, the filter takes more bits against a Filter that knew the number
// of values: about 3.2 times at s = 2 and 4.5 at s = 4 (see [Scalable]).
// Functions that make no Scalable ignore it, and so does ReadScalable
// without [WithSizing].
func WithGrowth(s int) Option {
	return func(c *config) { c.growth = s }
}

// WithTightening sets the tightening ratio r of a [Scalable]: each stage's
// false-positive rate is r times the one before, and the first is
// fpp·(1−r), so that their sum stays below fpp. The default is 0.9. It must
// be in (0, 1). A smaller r leaves more of fpp to the first stages, which
// then take fewer bits, but each stage then needs 1.44·log₂(1/r) bits a
// value more than the one before, and one more hash function every
// 1/log₂(1/r) stages; a larger r makes the first stages tighter and the
// later ones grow more slowly. Functions that make no Scalable ignore it,
// and so does ReadScalable without [WithSizing].
func WithTightening(r float64) Option {
	return func(c *config) { c.tightening = r }
}

// WithSizing gives [ReadRotating] and [ReadScalable] the expected
// insertions and the false-positive probability that the Rotating or the
// Scalable they read was made with, the arguments of [NewRotating] or
// [NewScalable]. They need them, and not the funnel alone, only for the
// Rotating to go on rotating or the Scalable to go on growing: they check
// them against the filters they read and return an error wrapping
// [ErrIncompatible] that names both sizes if they do not match. Without
// it, what they read answers lookups, and its Put panics. Other functions
// ignore it.
func WithSizing(expectedInsertions int64, fpp float64) Option {
	return func(c *config) { c.sized, c.n, c.fpp = true, expectedInsertions, fpp }
}

// WithWindow gives [ReadRotating] the window that the Rotating it reads was
// made with, the argument of [NewRotating], for it to go on rotating; it
// needs [WithSizing] too. Other functions ignore it.
func WithWindow(window time.Duration) Option {
	return func(c *config) { c.windowSet, c.window = true, window }
}
