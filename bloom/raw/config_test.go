package raw_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// TestConfigure checks the defaults each option documents, and that later
// options override earlier ones.
func TestConfigure(t *testing.T) {
	c := raw.Configure()
	assert.Equal(t, strategy.Murmur128Mitz64, c.Strategy)
	assert.False(t, c.LegacyHashCount)
	assert.NotNil(t, c.Clock)
	assert.Equal(t, 2, c.Growth)
	assert.Equal(t, 0.9, c.Tightening)
	assert.Zero(t, c.ExpectedInsertions)
	assert.Zero(t, c.FPP)
	assert.Zero(t, c.Window)

	clock := &bloomtest.Clock{}
	c = raw.Configure(bloom.WithStrategy(strategy.Murmur128Mitz32), bloom.WithLegacyHashCount(),
		bloom.WithClock(clock), bloom.WithGrowth(4), bloom.WithTightening(0.5), bloom.WithGrowth(3),
		bloom.WithSizing(1000, 0.01), bloom.WithWindow(time.Minute), nil)
	assert.Equal(t, raw.Config{Strategy: strategy.Murmur128Mitz32, LegacyHashCount: true,
		Clock: clock, Growth: 3, Tightening: 0.5, ExpectedInsertions: 1000, FPP: 0.01, Window: time.Minute}, c)
	assert.Nil(t, raw.Configure(bloom.WithClock(nil)).Clock)
}
