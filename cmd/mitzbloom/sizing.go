package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/mitzbloom/mitzbloom/bloom"
)

// commonFPPs are the false-positive probabilities inspect tries when it
// looks for the create call that sized a filter: round values people pass,
// and Guava's default of 0.03.
var commonFPPs = []float64{0.5, 0.25, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 0.003, 0.002, 0.001,
	1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-12, 1e-15}

// maxSizingScan bounds the candidates sizingsOf tries for one p, which
// only a p very close to 1 would exceed.
const maxSizingScan = 1 << 20

// A sizing is a range of expected insertions n for which Guava's
// create(funnel, n, FPP) makes a filter of a given bit size and number of
// hash functions.
//
// The question has no single answer, so inspect reports all of them for the
// p it tries: the bit size is rounded up to 64-bit words, so several n give
// the same size for one p (about 64·ln²2/−ln p of them), and n = 0 is sized
// as 1, which the ranges leave out. Different p give different numbers of
// hash functions, so a filter rarely matches more than one p.
type sizing struct {
	FPP           float64 `json:"fpp"`
	MinInsertions int64   `json:"minInsertions"`
	MaxInsertions int64   `json:"maxInsertions"`
	// HashRule says which rule for the number of hash functions gives the
	// filter's: "any" when both do, "legacy" for Guava 31.x's only (build
	// -legacy-k), "current" for current Guava's only.
	HashRule string `json:"hashRule"`
}

func (s sizing) String() string {
	n := strconv.FormatInt(s.MinInsertions, 10)
	if s.MaxInsertions > s.MinInsertions {
		n += "-" + strconv.FormatInt(s.MaxInsertions, 10)
	}
	rule := map[string]string{"any": "", "legacy": ", Guava 31.x's k only", "current": ", current Guava's k only"}[s.HashRule]
	return fmt.Sprintf("n %s, p %s%s", n, strconv.FormatFloat(s.FPP, 'g', -1, 64), rule)
}

// sizingsOf returns the sizings, over the false-positive probabilities ps,
// that give bitSize bits and k hash functions, by asking bloom.Size about
// every n near the one the continuous sizing formula inverts to.
func sizingsOf(bitSize int64, k int, ps []float64) []sizing {
	out := []sizing{}
	for _, p := range ps {
		// m = n·(−ln p)/ln²2 bits before rounding, which Size rounds up to
		// words: the n that give bitSize lie between the inverses of
		// bitSize−64 and bitSize, give or take the rounding of the
		// floating-point formula.
		perKey := -math.Log(p) / (math.Ln2 * math.Ln2)
		lo := float64(bitSize-64) / perKey
		hi := float64(bitSize) / perKey
		margin := 2 + hi*1e-9
		first, last := max(1, int64(lo-margin)), int64(hi+margin)
		if last < first || last-first > maxSizingScan {
			continue
		}
		ranges := sizingRanges{out: out}
		for n := first; n <= last; n++ {
			ranges.add(p, n, hashRule(n, p, bitSize, k))
		}
		out = ranges.out
	}
	return out
}

// sizingRanges gathers the n that give a filter, tried in increasing order
// for one p, into sizings: ranges of consecutive n of one hash rule.
type sizingRanges struct {
	out     []sizing
	extends bool // whether the last of out ends at the n before
}

// add adds n, for which create(funnel, n, p) gives the filter by rule, or
// by none if rule is "".
func (r *sizingRanges) add(p float64, n int64, rule string) {
	switch {
	case rule == "":
		r.extends = false
	case r.extends && r.out[len(r.out)-1].HashRule == rule:
		r.out[len(r.out)-1].MaxInsertions = n
	default:
		r.out = append(r.out, sizing{FPP: p, MinInsertions: n, MaxInsertions: n, HashRule: rule})
		r.extends = true
	}
}

// hashRule returns which k rules make create(funnel, n, p) a filter of
// bitSize bits and k hash functions, as a sizing's HashRule, or "".
func hashRule(n int64, p float64, bitSize int64, k int) string {
	matches := func(opts ...bloom.Option) bool {
		b, kk, err := bloom.Size(n, p, opts...)
		return err == nil && b == bitSize && kk == k
	}
	current, legacy := matches(), matches(bloom.WithLegacyHashCount())
	switch {
	case current && legacy:
		return "any"
	case legacy:
		return "legacy"
	case current:
		return "current"
	}
	return ""
}
