package bloom

import "errors"

// Errors returned by this package wrap one of these, so callers can test for
// them with errors.Is; the message adds what exactly was wrong.
var (
	// ErrInvalidArgument reports a bad argument, such as a negative number of
	// expected insertions or a false-positive probability outside (0, 1),
	// where Guava throws IllegalArgumentException or NullPointerException.
	ErrInvalidArgument = errors.New("bloom: invalid argument")

	// ErrIncompatible reports filters that cannot be combined by
	// [Filter.PutAll], because their sizes, hash counts, strategies or
	// funnels differ.
	ErrIncompatible = errors.New("bloom: incompatible filters")

	// ErrCorrupt reports a serialized filter that Guava would reject as well.
	// Errors for a stream that ends early wrap both ErrCorrupt and
	// io.ErrUnexpectedEOF.
	ErrCorrupt = errors.New("bloom: corrupt filter")

	// ErrTooLarge reports a serialized filter larger than the limit passed to
	// [ReadFromLimit], or than a 32-bit platform can hold.
	ErrTooLarge = errors.New("bloom: filter too large")
)
