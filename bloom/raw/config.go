package raw

import (
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/internal/link"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// A Config holds what a list of bloom.Options sets, for code that takes
// bloom's options to size or run a filter of its own. Each field says which
// option sets it and what it defaults to. Fields may be added in later
// releases, so a Config literal should name its fields.
type Config struct {
	// Strategy maps hashes to bits ([bloom.WithStrategy]); the default is
	// strategy.Murmur128Mitz64.
	Strategy strategy.Strategy
	// LegacyHashCount computes the number of hash functions as Guava 31.x
	// and earlier do ([bloom.WithLegacyHashCount]); the default is false.
	LegacyHashCount bool
	// Clock is a Rotating's clock ([bloom.WithClock]); the default is the
	// system's clock, time.Now and time.AfterFunc.
	Clock bloom.Clock
	// Growth and Tightening are a Scalable's growth factor and tightening
	// ratio ([bloom.WithGrowth], [bloom.WithTightening]); the defaults are 2
	// and 0.9.
	Growth     int
	Tightening float64
	// ExpectedInsertions and FPP are the sizing that [bloom.WithSizing]
	// gives; both are 0 without it.
	ExpectedInsertions int64
	FPP                float64
	// Window is what [bloom.WithWindow] gives; 0 without it.
	Window time.Duration
}

// Configure returns the Config that opts make from the defaults, applied
// in order, so that a later option overrides an earlier one: the
// parameters [bloom.New], [bloom.Size] and the others would use.
func Configure(opts ...bloom.Option) Config {
	c := link.Configure(opts)
	clock, _ := c.Clock.(bloom.Clock)
	return Config{
		Strategy:           c.Strategy,
		LegacyHashCount:    c.LegacyHashCount,
		Clock:              clock,
		Growth:             c.Growth,
		Tightening:         c.Tightening,
		ExpectedInsertions: c.ExpectedInsertions,
		FPP:                c.FPP,
		Window:             c.Window,
	}
}
