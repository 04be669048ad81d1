package bloomprom

import (
	"context"
	"math"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// The kinds of filter a Collector reads, each by the methods it has: a
// filter of any element type has them.
type (
	// inMemory is a bloom.Filter, or a Hybrid's local filter.
	inMemory interface {
		BitSize() int64
		BitCount() int64
		NumHashFunctions() int
	}
	rotating interface{ Stats() bloom.RotatingStats }
	scalable interface{ Stats() bloom.ScalableStats }
	// remote is a redisfilter.Filter.
	remote interface {
		BitSize() int64
		NumHashFunctions() int
		BitCount(context.Context) (int64, error)
	}
	windowed interface {
		remote
		ExpectedFPP(context.Context) (float64, error)
		ApproximateElementCount(context.Context) (int64, error)
		Generations() int
		Generation(time.Time) int64
		Period() time.Duration
	}
	hybrid interface {
		inMemory
		AfterSync(func(redisfilter.SyncStats)) (stop func())
		LastSync() time.Time
	}
)

// A kind says which of the interfaces above a registered filter is read
// through, and so which metrics it has.
type kind int

const (
	kindFilter kind = iota
	kindRotating
	kindScalable
	kindRemote
	kindWindowed
	kindHybrid
)

// needsRedis reports whether the statistics of a filter of kind k are
// read from Redis.
func (k kind) needsRedis() bool { return k == kindRemote || k == kindWindowed }

// A sample is one read of a filter's statistics. Sizing fields are 0 when
// unknown; those of one kind are 0 for the others.
type sample struct {
	bitSize, bitCount int64
	elements          int64 // ApproximateElementCount: math.MaxInt64 when saturated
	fpp               float64
	expected          int64   // expected insertions, 0 if unknown
	target            float64 // target fpp, 0 if unknown

	stages           int
	rotations, early int64
	age, period      time.Duration
	lastSync         time.Duration
}

// read reads e's statistics. Only a filter in Redis uses ctx, and only it
// returns an error. A read from memory allocates nothing but what a
// Scalable's Stats does, and returns its sample by value, which stays on
// the stack.
func (e *entry) read(ctx context.Context) (sample, error) {
	var s sample
	switch e.kind {
	case kindFilter, kindHybrid:
		f := e.filter.(inMemory)
		s = fromCount(f.BitCount(), f.BitSize(), f.NumHashFunctions())
		s.expected, s.target = e.n, e.p
		if e.kind == kindHybrid {
			s.lastSync = time.Since(e.filter.(hybrid).LastSync())
		}

	case kindRotating:
		st := e.filter.(rotating).Stats()
		gen := float64(st.BitSize / 2)
		s.bitSize = st.BitSize
		s.bitCount = int64(math.Round(st.Current.FillRatio*gen) + math.Round(st.Previous.FillRatio*gen))
		s.elements, s.fpp = st.ApproximateElementCount, st.ExpectedFPP
		n, p := e.n, e.p
		if st.ExpectedInsertions > 0 {
			n, p = st.ExpectedInsertions, st.FPP
		}
		// Two full generations: 2n values, at 1 − (1−p)², the rate
		// ExpectedFPP reaches just before a rotation.
		s.expected, s.target = 2*n, 1-(1-p)*(1-p)
		s.rotations, s.early = st.Rotations, st.EarlyRotations
		s.age, s.period = st.Current.Age, st.Window

	case kindScalable:
		st := e.filter.(scalable).Stats()
		s.bitSize, s.elements, s.fpp = st.BitSize, st.ApproximateElementCount, st.ExpectedFPP
		for _, stage := range st.Stages {
			s.bitCount += int64(math.Round(stage.FillRatio * float64(stage.BitSize)))
			s.expected += stage.ExpectedInsertions
		}
		s.target = st.FPP
		if s.target == 0 {
			s.target = e.p
		}
		s.stages = len(st.Stages)

	case kindRemote:
		f := e.filter.(remote)
		count, err := f.BitCount(ctx)
		if err != nil {
			return s, err
		}
		s = fromCount(count, f.BitSize(), f.NumHashFunctions())
		s.expected, s.target = e.n, e.p

	case kindWindowed:
		w := e.filter.(windowed)
		var err error
		if s.bitCount, err = w.BitCount(ctx); err != nil {
			return s, err
		}
		if s.fpp, err = w.ExpectedFPP(ctx); err != nil {
			return s, err
		}
		if s.elements, err = w.ApproximateElementCount(ctx); err != nil {
			return s, err
		}
		// MightContain looks in the last Generations generations and the
		// next; in a steady stream the next is empty and the others hold
		// up to n values each.
		g := w.Generations()
		s.bitSize = int64(g+1) * w.BitSize()
		s.expected, s.target = int64(g)*e.n, 1-math.Pow(1-e.p, float64(g))
		now := time.Now()
		s.period = w.Period()
		s.age = now.Sub(time.UnixMilli(w.Generation(now) * s.period.Milliseconds()))
	}
	return s, nil
}

// fromCount returns the sample of a filter of bitSize bits and k hash
// functions with count bits set: Guava's statistics of the count, as the
// filter's own ExpectedFPP and ApproximateElementCount compute them, from
// one pass over the bits instead of one each.
func fromCount(count, bitSize int64, k int) sample {
	return sample{
		bitSize:  bitSize,
		bitCount: count,
		elements: raw.ApproximateElementCount(count, bitSize, k),
		fpp:      raw.ExpectedFPP(count, bitSize, k),
	}
}

// elementsValue returns a count of ApproximateElementCount as a sample
// value: +Inf for a saturated filter, whose count says nothing.
func elementsValue(n int64) float64 {
	if n == math.MaxInt64 {
		return math.Inf(1)
	}
	return float64(n)
}
