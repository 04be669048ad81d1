//go:build !race

package bench

// raceEnabled reports whether the tests were built with -race.
const raceEnabled = false
