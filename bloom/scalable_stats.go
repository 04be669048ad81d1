package bloom

// ScalableStats describes a [Scalable] at one moment, for monitoring.
type ScalableStats struct {
	// Stages describes the stages, oldest first.
	Stages []StageStats
	// BitSize is the number of bits in all the stages: they take
	// BitSize/8 bytes of memory.
	BitSize int64
	// ApproximateElementCount is [Scalable.ApproximateElementCount]: the
	// sum of the stages' Inserts.
	ApproximateElementCount int64
	// ExpectedFPP is the probability that MightContain returns true for a
	// value that was never put: 1 − (1−p₀)(1−p₁)…, for stages whose
	// ExpectedFPP are p₀, p₁, …, at most about the sum of the rates the
	// stages are sized for, below the fpp the Scalable was made with.
	ExpectedFPP float64
	// FPP is the fpp the Scalable was made with, which its ExpectedFPP
	// stays below however many values it receives; 0 for a Scalable read
	// without its sizing (see [WithSizing]), which cannot grow.
	FPP float64
}

// StageStats describes one stage of a [Scalable].
type StageStats struct {
	// ExpectedInsertions and FPP are what the stage is sized for, as New
	// sizes a filter: initialExpected·sⁱ values at fpp·(1−r)·rⁱ. Both are
	// 0 for a Scalable read without its sizing (see [WithSizing]).
	ExpectedInsertions int64
	FPP                float64
	// BitSize and NumHashFunctions are the stage's [Filter.BitSize] and
	// [Filter.NumHashFunctions].
	BitSize          int64
	NumHashFunctions int
	// Inserts counts the Puts that set a bit in the stage. The stage is
	// full when it reaches about ExpectedInsertions.
	Inserts int64
	// FillRatio is the fraction of the stage's bits that are set,
	// BitCount/BitSize.
	FillRatio float64
	// ApproximateElementCount and ExpectedFPP are the stage's
	// [Filter.ApproximateElementCount] and [Filter.ExpectedFPP].
	ApproximateElementCount int64
	ExpectedFPP             float64
}

// Stats returns statistics of s. It reads every word of every stage a few
// times; like a Filter's statistics, it sees the stages as a rolling
// snapshot while Puts run, but always the stages of one moment.
func (s *Scalable[T]) Stats() ScalableStats {
	l := s.stages.Load()
	out := ScalableStats{Stages: make([]StageStats, len(l.stages)), FPP: s.fpp}
	for i, st := range l.stages {
		f := st.f
		ss := StageStats{
			ExpectedInsertions:      st.expected,
			FPP:                     st.fpp,
			BitSize:                 f.BitSize(),
			NumHashFunctions:        f.k,
			Inserts:                 st.inserts.total(),
			FillRatio:               float64(f.BitCount()) / float64(f.BitSize()),
			ApproximateElementCount: f.ApproximateElementCount(),
			ExpectedFPP:             f.ExpectedFPP(),
		}
		out.Stages[i] = ss
		out.BitSize += ss.BitSize
		out.ApproximateElementCount += ss.Inserts
		out.ExpectedFPP = out.ExpectedFPP + ss.ExpectedFPP - out.ExpectedFPP*ss.ExpectedFPP
	}
	return out
}
