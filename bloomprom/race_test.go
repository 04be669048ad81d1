//go:build race

package bloomprom_test

// raceEnabled reports whether the test binary was built with -race, under
// which allocation counts mean nothing (sync.Pool drops items at random,
// and the detector allocates of its own).
const raceEnabled = true
