// Package link is how packages raw and mapped reach what package bloom
// keeps unexported: a Filter's Core, which every Filter begins with, and
// the functions here that package bloom sets when it is initialized, which
// they, importing bloom, call. Their values travel as any, since a function
// value cannot be generic; each function says what they are.
package link

import (
	"time"
	"unsafe"

	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/internal/probe"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// Core is what a bloom.Filter of any element type holds first: the first
// fields of bloom.Filter are these, of these types, in this order, so that
// a pointer to a bloom.Filter points to its Core, which package raw reaches
// without a call on the paths that put values. bloom's tests check that
// the two layouts agree.
type Core struct {
	Strategy strategy.Strategy
	Probe    probe.Prober
	K        int
	Bits     *bitarray.Array
}

// FilterCore returns the Core of f, which points to a bloom.Filter[T] of
// any T.
func FilterCore(f unsafe.Pointer) *Core { return (*Core)(f) }

// Config is what a list of bloom.Options sets, with the Clock as any (a
// bloom.Clock, or nil).
type Config struct {
	Strategy           strategy.Strategy
	LegacyHashCount    bool
	Clock              any
	Growth             int
	Tightening         float64
	ExpectedInsertions int64
	FPP                float64
	Window             time.Duration
}

var (
	// FilterFunnel returns the funnel, a funnel.Funnel[T], of f, a
	// *bloom.Filter[T].
	FilterFunnel func(f any) any

	// CheckCompatible returns the error that f.PutAll, for f a
	// *bloom.Filter[T], returns for a filter of k hash functions, bitSize
	// bits, strategy s and funnel fn, a funnel.Funnel[T], or nil.
	CheckCompatible func(f any, k int, bitSize int64, s strategy.Strategy, fn any) error

	// Configure returns what opts, a []bloom.Option, set.
	Configure func(opts any) Config

	// ParseHeader decodes the header at the start of b as bloom.ReadFrom
	// does.
	ParseHeader func(b []byte) (s strategy.Strategy, k int, words int64, err error)

	// FunnelName returns what a bloom.Filter's String calls its funnel
	// fn, a funnel.Funnel[T].
	FunnelName func(fn any) string

	// CheckEncoded checks that b holds exactly one filter in Guava's
	// writeTo format, as Filter.UnmarshalBinary checks its data and with
	// its errors, without decoding the words, and returns its header.
	CheckEncoded func(b []byte) (s strategy.Strategy, k int, words int64, err error)
)
