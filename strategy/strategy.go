// Package strategy maps a value's hash onto the bit indexes of a Bloom filter
// exactly as Guava's BloomFilterStrategies do.
//
// Both strategies take the Murmur3-128 hash (seed 0) of the bytes a funnel
// feeds, as Guava's Hashing.murmur3_128() computes it, and derive k indexes
// from its two 64-bit halves by double hashing.
// [Murmur128Mitz64] is Guava's default; [Murmur128Mitz32] is its legacy
// strategy, which uses only 32-bit arithmetic and so only the first 2³¹
// bits of a filter.
//
// Murmur3 is not keyed: whoever chooses the values a filter sees can compute
// their indexes and manufacture false positives, or fill a filter on purpose.
// A filter that sees hostile input should not be the only check.
package strategy

import (
	"errors"
	"fmt"
)

// A Strategy is one of Guava's ways of turning a hash into bit indexes. Its
// ordinal is part of the serialized form, and its String is Guava's enum name.
// The only strategies are [Murmur128Mitz32] and [Murmur128Mitz64]; the
// interface cannot be implemented outside this module.
type Strategy interface {
	// Ordinal returns the number Guava serializes the strategy as.
	Ordinal() int
	// String returns Guava's name of the strategy, as in "MURMUR128_MITZ_64".
	String() string

	// isStrategy seals the interface: a filter must be able to rely on
	// there being only the two strategies below.
	isStrategy()
}

// Murmur128Mitz32 is Guava's MURMUR128_MITZ_32 strategy, ordinal 0: indexes
// are computed in 32-bit arithmetic from the first half of the hash. It is
// ready to use.
var Murmur128Mitz32 Strategy = mitz32{}

// Murmur128Mitz64 is Guava's MURMUR128_MITZ_64 strategy, ordinal 1 and the
// default: indexes are computed in 64-bit arithmetic from both halves of the
// hash. It is ready to use.
var Murmur128Mitz64 Strategy = mitz64{}

// ErrUnknownOrdinal is returned by ByOrdinal for an ordinal that names no
// strategy.
var ErrUnknownOrdinal = errors.New("strategy: unknown ordinal")

// ByOrdinal returns the strategy Guava serializes as ordinal.
func ByOrdinal(ordinal int) (Strategy, error) {
	switch ordinal {
	case 0:
		return Murmur128Mitz32, nil
	case 1:
		return Murmur128Mitz64, nil
	}
	return nil, fmt.Errorf("%w %d: want 0 (%v) or 1 (%v)", ErrUnknownOrdinal, ordinal, Murmur128Mitz32, Murmur128Mitz64)
}
