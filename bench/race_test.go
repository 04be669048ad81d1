//go:build race

package bench

// raceEnabled reports whether the tests were built with -race. (The
// library's internal/race says the same; this module imports none of the
// library's internal packages.)
const raceEnabled = true
