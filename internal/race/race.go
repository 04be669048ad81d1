//go:build race

// Package race reports whether the race detector is on, for tests whose
// subject behaves differently under it: sync.Pool, for one, drops items at
// random when the detector is on, so allocation counts are not meaningful.
package race

// Enabled reports whether the binary was built with -race.
const Enabled = true
