// Package link is how package raw reaches what package bloom keeps
// unexported: package bloom sets the functions here when it is initialized,
// and raw, which imports bloom, calls them. The values travel as any,
// since a function cannot be generic; each function says what they are.
package link

import (
	"time"

	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/internal/probe"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// Parts is what a bloom.Filter of any element type holds.
type Parts struct {
	Funnel   any // its funnel.Funnel[T]
	Strategy strategy.Strategy
	K        int
	Bits     *bitarray.Array
	Probe    probe.Prober
}

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
	// FilterParts returns the Parts of f, a *bloom.Filter[T].
	FilterParts func(f any) Parts

	// CheckCompatible returns the error that f.PutAll, for f a
	// *bloom.Filter[T], returns for a filter of k hash functions, bitSize
	// bits, strategy s and funnel fn, a funnel.Funnel[T], or nil.
	CheckCompatible func(f any, k int, bitSize int64, s strategy.Strategy, fn any) error

	// Configure returns what opts, a []bloom.Option, set.
	Configure func(opts any) Config

	// ParseHeader decodes the header at the start of b as bloom.ReadFrom
	// does.
	ParseHeader func(b []byte) (s strategy.Strategy, k int, words int64, err error)
)
