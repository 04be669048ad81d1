// Package filterbits hands the packages built on bloom the bit array of a
// bloom.Filter, which package bloom keeps unexported: redisfilter's Hybrid
// sets the bits of its local filter itself, so that it knows which it set,
// and takes in the bits other processes set, so that each Sync moves only
// what changed.
package filterbits

import "github.com/mitzbloom/mitzbloom/internal/bitarray"

// Of returns the bit array of f, a *bloom.Filter[T] of any T, or nil for
// anything else. Package bloom sets it when it is initialized.
var Of func(f any) *bitarray.Array
