// Package filterbits hands the bench module the bit array of a
// bloom.Filter, which package bloom keeps unexported, so that the limits
// benchmarks can measure the memory under a filter (the share of it on
// huge pages). It promises no API: bench is built in this repository's
// workspace, against the root module it sits in, and nothing released
// imports it. Filters kept elsewhere use bloom's exported low level
// instead (Filter.PutHash, SetBit, OrEncoded).
package filterbits

import "github.com/mitzbloom/mitzbloom/internal/bitarray"

// Of returns the bit array of f, a *bloom.Filter[T] of any T, or nil for
// anything else. Package bloom sets it when it is initialized.
var Of func(f any) *bitarray.Array
