//go:build !unix

package main

// openFileLimit reports that there is no limit on open files that the
// proxy can read, as on Windows, whose handle limit is far above what its
// defaults use.
func openFileLimit() (int, bool) { return 0, false }
