package redisfilter

import "errors"

// Errors returned by this package about the filter in Redis wrap one of
// these, so callers can test for them with errors.Is. Errors for bad
// arguments wrap [bloom.ErrInvalidArgument], for a filter too large for Redis
// [bloom.ErrTooLarge], and for merging an incompatible local filter
// [bloom.ErrIncompatible]. Errors from Redis and the network are returned
// wrapped, so errors.Is finds context.DeadlineExceeded among them.
var (
	// ErrMismatch reports a filter stored in Redis with parameters (bit size,
	// number of hash functions, strategy, funnel name, window) other than
	// those it was opened with. The message shows both.
	ErrMismatch = errors.New("redisfilter: parameters do not match")

	// ErrNotFound reports a filter whose keys are gone from Redis: deleted,
	// expired, evicted, or lost with a restart of a server that does not
	// persist its data. Open re-creates it, empty.
	ErrNotFound = errors.New("redisfilter: filter not found")

	// ErrNotFilter reports a key that holds something other than a filter: a
	// value of another type, a string of the wrong length, or a bitmap
	// without its config key.
	ErrNotFilter = errors.New("redisfilter: key holds no filter")
)
