package redisfilter

import (
	"fmt"

	"github.com/mitzbloom/mitzbloom/bloom"
)

// The filters of this package are handles to filters kept in Redis, and an
// Option is a setting of Open: none is data that an encoder could write.
// Each says so with an error from MarshalJSON, rather than let
// encoding/json write it as {}, and names what to encode instead.

// MarshalJSON returns an error wrapping [bloom.ErrInvalidArgument]: f is a
// handle to a filter in Redis, not its data. Encode the bloom.Filter that
// [Filter.Snapshot] returns.
func (f *Filter[T]) MarshalJSON() ([]byte, error) {
	return nil, notData("a Filter is a handle to a filter in Redis", "the bloom.Filter that Snapshot returns")
}

// MarshalJSON returns an error wrapping [bloom.ErrInvalidArgument]: w is a
// handle to a filter in Redis, not its data. Encode the bloom.Filter of a
// generation that [Windowed.Snapshot] returns.
func (w *Windowed[T]) MarshalJSON() ([]byte, error) {
	return nil, notData("a Windowed filter is a handle to a filter in Redis", "the bloom.Filter of a generation that Snapshot returns")
}

// MarshalJSON returns an error wrapping [bloom.ErrInvalidArgument]: h keeps
// a filter in Redis and a local copy in step. Encode the copy of the local
// filter that [Hybrid.Copy] returns.
func (h *Hybrid[T]) MarshalJSON() ([]byte, error) {
	return nil, notData("a Hybrid keeps a filter in Redis and a local copy in step", "the bloom.Filter that Copy returns")
}

// MarshalJSON returns an error wrapping [bloom.ErrInvalidArgument]: an
// Option is a setting of [Open] and [OpenWindowed], not data.
func (o Option) MarshalJSON() ([]byte, error) {
	return nil, notData("an Option is a setting of Open and OpenWindowed", "the values it was made from")
}

// notData is the error of a MarshalJSON of something that is not data.
func notData(what, instead string) error {
	return fmt.Errorf("%w: redisfilter: %s, not data to encode: encode %s", bloom.ErrInvalidArgument, what, instead)
}
