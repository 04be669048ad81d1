package main

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// defaultScalableN is the first stage's N of build -scalable without -n.
const defaultScalableN = 1000

// readStages reads the rest of a Scalable's stages from r, after the
// first ones, which took size bytes: filters of one strategy, each larger
// than the one before, until r ends. limit is what -max-bytes leaves for
// them, or negative for no limit.
func readStages[T any](r io.Reader, f funnel.Funnel[T], limit, maxBytes int64, stages []*bloom.Filter[T], size int64) ([]*bloom.Filter[T], error) {
	for {
		last := stages[len(stages)-1]
		next, n, err := readFilter(r, f, limit)
		switch {
		case errors.Is(err, io.EOF):
			return stages, nil
		case errors.Is(err, errNoOrdinal) || errors.Is(err, bloom.ErrCorrupt):
			return nil, fmt.Errorf("%w: after %d stages of a Scalable, %d bytes: %w", errNotFilter, len(stages), size, err)
		case errors.Is(err, errOverLimit):
			return nil, fmt.Errorf("%d stages of a Scalable, %d bytes, and one of %d more: more than -max-bytes %d", len(stages), size, n, maxBytes)
		case err != nil:
			return nil, fmt.Errorf("after %d stages of a Scalable, %d bytes: %w", len(stages), size, err)
		}
		if next.BitSize() <= last.BitSize() || raw.Strategy(next) != raw.Strategy(last) {
			return nil, fmt.Errorf("%w: stage %d of a Scalable (%s) is followed by one that is not larger (%s)",
				errNotFilter, len(stages)-1, describe(last), describe(next))
		}
		stages = append(stages, next)
		size += n
		if limit >= 0 {
			limit -= n
		}
	}
}

// isScalable reports whether filters, read by readFilters, are the stages
// of a Scalable rather than one filter or a Rotating's generations, which
// have one size.
func isScalable[T any](filters []*bloom.Filter[T]) bool {
	return len(filters) > 1 && filters[1].BitSize() != filters[0].BitSize()
}

// newScalableReport describes the stages of a Scalable, and their total:
// the bits and bytes of all of them, the sum of their element counts, and
// the probability that any of them answers "maybe" for a key never put,
// 1 − (1−p₀)(1−p₁)…, as Scalable.ExpectedFPP computes it.
func newScalableReport(name string, filters []*bloom.Filter[[]byte], ps []float64) report {
	r := report{File: name, Kind: "scalable"}
	total := &r.filterReport
	for _, f := range filters {
		s := describeFilter(f, ps)
		// Stage i is sized for p·(1−r)·rⁱ, which no round p is: the
		// sizings of the whole, below, give the n and p of the Scalable.
		s.Sizings = nil
		r.Stages = append(r.Stages, s)
		total.BitSize += s.BitSize
		total.Bytes += s.Bytes
		total.BitCount += s.BitCount
		total.ApproximateElementCount = saturatingAdd(total.ApproximateElementCount, s.ApproximateElementCount)
		total.ExpectedFPP = total.ExpectedFPP + s.ExpectedFPP - total.ExpectedFPP*s.ExpectedFPP
	}
	total.Strategy, total.StrategyOrdinal = r.Stages[0].Strategy, r.Stages[0].StrategyOrdinal
	total.FillRatio = float64(total.BitCount) / float64(total.BitSize)
	total.Sizings, total.scalable = scalableSizings(filters, ps), true
	return r
}

// The growth factor and tightening ratio of build -scalable, bloom's
// defaults, which are the only ones scalableSizings tries.
const (
	scalableGrowth     = 2
	scalableTightening = 0.9
)

// scalableSizings returns the sizings, over the false-positive
// probabilities ps, of a bloom.NewScalable(f, n, p) with the default growth
// and tightening whose stages are stages: the n and p that build -scalable
// takes with -n and -p, and bloom.WithSizing to read the stages back into a
// Scalable that goes on growing. Stage i is sized for n·2ⁱ values at
// p·(1−0.9)·0.9ⁱ, the rate multiplied out as bloom multiplies it.
func scalableSizings(stages []*bloom.Filter[[]byte], ps []float64) []sizing {
	ranges := sizingRanges{out: []sizing{}}
	for _, p := range ps {
		first := p * (1 - scalableTightening)
		for _, s := range sizingsOf(stages[0].BitSize(), stages[0].NumHashFunctions(), []float64{first}) {
			ranges.extends = false
			for n := s.MinInsertions; n <= s.MaxInsertions; n++ {
				ranges.add(p, n, stagesRule(stages, n, first))
			}
		}
	}
	return ranges.out
}

// stagesRule returns which k rules make every stage the one a Scalable
// whose first stage is sized for n values at rate makes, as a sizing's
// HashRule, or "".
func stagesRule(stages []*bloom.Filter[[]byte], n int64, rate float64) string {
	current, legacy := true, true
	for _, st := range stages {
		switch hashRule(n, rate, st.BitSize(), st.NumHashFunctions()) {
		case "":
			return ""
		case "legacy":
			current = false
		case "current":
			legacy = false
		}
		if n > math.MaxInt64/scalableGrowth {
			return ""
		}
		n, rate = n*scalableGrowth, rate*scalableTightening
	}
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

// saturatingAdd adds two element counts, of which math.MaxInt64 means
// unknown.
func saturatingAdd(a, b int64) int64 {
	if a > maxCount-b {
		return maxCount
	}
	return a + b
}

const maxCount = 1<<63 - 1

// writeScalableText writes the text form of a Scalable's report: the
// total, then each stage, oldest first. The total has no number of hash
// functions, which differs from stage to stage, nor sizings.
func (r *report) writeScalableText(w io.Writer) {
	fmt.Fprintf(w, "file:                      %s\n", r.File)
	fmt.Fprintf(w, "kind:                      Scalable, %d stages; the total:\n", len(r.Stages))
	r.filterReport.writeText(w, "")
	for i, s := range r.Stages {
		fmt.Fprintf(w, "stage %d:\n", i)
		s.writeText(w, "  ")
	}
}

// buildScalable is build -scalable: the keys go into a Scalable whose
// first stage is sized for b.n keys, which grows as they come.
func (k keyKind[T]) buildScalable(b *builder) error {
	s, err := bloom.NewScalable(k.funnel, b.n, b.p, b.opts...)
	if err != nil {
		return err
	}
	if err := k.fill(b, s.PutMany); err != nil {
		return err
	}
	b.filter, b.fpp = s, s.Stats().ExpectedFPP
	return nil
}
