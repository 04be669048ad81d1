//go:build race

package redisfilter_test

// raceEnabled reports whether the test binary was built with -race, for
// tests whose subject behaves differently under it: sync.Pool, for one,
// drops items at random, so allocation counts are not meaningful. It is
// internal/race's constant, which a module of its own should not import.
const raceEnabled = true
