package main

import (
	"fmt"
	"io"
	"math"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
)

// defaultScalableN is the first stage's N of build -scalable without -n.
const defaultScalableN = 1000

// newScalableReport describes the stages of a Scalable, of headers stages
// and statistics st, and their total: the bits and bytes of all of them,
// the sum of their element counts, and the probability that any of them
// answers "maybe" for a key never put, 1 − (1−p₀)(1−p₁)…, as
// Scalable.ExpectedFPP computes it.
func newScalableReport(name string, stages []raw.Header, st bloom.ScalableStats, ps []float64) report {
	r := report{File: name, Kind: "scalable"}
	total := &r.filterReport
	for i, h := range stages {
		s := describeFilter(h, bitCount(st.Stages[i].FillRatio, h), ps)
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
	total.Sizings, total.scalable = scalableSizings(stages, ps), true
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
func scalableSizings(stages []raw.Header, ps []float64) []sizing {
	ranges := sizingRanges{out: []sizing{}}
	for _, p := range ps {
		first := p * (1 - scalableTightening)
		for _, s := range sizingsOf(stages[0].Words*64, stages[0].NumHashFunctions, []float64{first}) {
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
func stagesRule(stages []raw.Header, n int64, rate float64) string {
	current, legacy := true, true
	for _, st := range stages {
		switch hashRule(n, rate, st.Words*64, st.NumHashFunctions) {
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
