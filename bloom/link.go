package bloom

import (
	"github.com/mitzbloom/mitzbloom/bloom/internal/link"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// Package raw, the low level of this package, reaches a Filter's core
// through link.FilterCore (a Filter begins with the fields of link.Core),
// and the rest of a Filter, this package's parsing and its options through
// the functions of package link, which this package fills in here; package
// mapped reaches the checks of a filter's encoding the same way. A
// Filter[T] of any T is found by the unexported methods below, which an
// interface named in this package can ask for.

func init() {
	link.FilterFunnel = func(f any) any {
		return f.(interface{ funnelAny() any }).funnelAny()
	}
	link.CheckCompatible = func(f any, k int, bitSize int64, s strategy.Strategy, fn any) error {
		return f.(interface {
			checkParamsAny(int, int64, strategy.Strategy, any) error
		}).checkParamsAny(k, bitSize, s, fn)
	}
	link.Configure = func(opts any) link.Config {
		c := configure(opts.([]Option))
		out := link.Config{
			Strategy:        c.strategy,
			LegacyHashCount: c.legacyHashCount,
			Clock:           c.clock,
			Growth:          c.growth,
			Tightening:      c.tightening,
			Window:          c.window,
		}
		if c.sized {
			out.ExpectedInsertions, out.FPP = c.n, c.fpp
		}
		return out
	}
	link.ParseHeader = func(b []byte) (strategy.Strategy, int, int64, error) {
		h, err := parseHeaderPrefix(b)
		return h.strategy, h.k, h.words, err
	}
	link.FunnelName = funnelName
	link.CheckEncoded = func(b []byte) (strategy.Strategy, int, int64, error) {
		h, err := checkEncoded(b)
		return h.strategy, h.k, h.words, err
	}
}

// funnelAny returns f's funnel, for link.FilterFunnel.
func (f *Filter[T]) funnelAny() any { return f.funnel }

// checkParamsAny is checkParams for a funnel passed as any, which raw
// passes as the funnel.Funnel[T] it is.
func (f *Filter[T]) checkParamsAny(k int, bitSize int64, s strategy.Strategy, fn any) error {
	typed, _ := fn.(funnel.Funnel[T])
	return f.checkParams(k, bitSize, s, typed)
}
