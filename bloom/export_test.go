package bloom

import "github.com/mitzbloom/mitzbloom/funnel"

// NewPlain returns a filter made as New makes it, that writes its bits
// plainly, as a Builder's does until it hands it over, so that the tests of
// package bloom_test run both write modes through Filter's methods.
func NewPlain[T any](f funnel.Funnel[T], n int64, p float64, opts ...Option) (*Filter[T], error) {
	return newSized(f, n, p, opts, true)
}
