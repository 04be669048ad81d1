package bloom

import (
	"math/bits"
	"time"

	"github.com/mitzbloom/mitzbloom/internal/estimate"
)

// RotatingStats describes a [Rotating] at one moment, for monitoring.
type RotatingStats struct {
	// Rotations counts the generations started since the Rotating was
	// made or read.
	Rotations int64
	// EarlyRotations counts the rotations that happened because the
	// current generation had received its expected insertions before its
	// window ended. While it grows, values may be remembered for less than
	// a window: the stream has more new values per window than the
	// generations were sized for.
	EarlyRotations int64

	// Current and Previous describe the two generations.
	Current, Previous GenerationStats
	// BitSize is the number of bits in the two generations together: they
	// take BitSize/8 bytes of memory.
	BitSize int64

	// FillRatio is the fraction of the bits of the generations' union that
	// are set: bits set in either generation, over the bit size of one.
	FillRatio float64
	// ApproximateElementCount estimates the number of distinct values that
	// either generation holds, from the bits set in their union, with the
	// formula of [Filter.ApproximateElementCount].
	ApproximateElementCount int64
	// ExpectedFPP estimates the probability that MightContain returns true
	// for a value that was never put: 1 − (1−p₁)(1−p₂) for generations whose
	// ExpectedFPP are p₁ and p₂, which is at most about twice the fpp the
	// Rotating was made with.
	ExpectedFPP float64

	// ExpectedInsertions, FPP and Window are what the Rotating was made
	// with: each generation is sized for ExpectedInsertions values at FPP,
	// and lasts Window unless it fills first. All three are 0 for a
	// Rotating read without its sizing and window (see [WithSizing]),
	// which cannot rotate.
	ExpectedInsertions int64
	FPP                float64
	Window             time.Duration
}

// GenerationStats describes one generation of a [Rotating].
type GenerationStats struct {
	// Age is the time since the generation became current. After
	// [ReadRotating], the current generation's age counts from the read,
	// and the previous one's from a window before it.
	Age time.Duration
	// Inserts counts the Puts that set a bit in the generation: about the
	// distinct values put in it. A generation is full when it reaches the
	// expected insertions. After ReadRotating, it starts at the
	// generation's ApproximateElementCount.
	Inserts int64
	// FillRatio is the fraction of the generation's bits that are set,
	// BitCount/BitSize.
	FillRatio float64
	// ApproximateElementCount and ExpectedFPP are the generation's
	// [Filter.ApproximateElementCount] and [Filter.ExpectedFPP].
	ApproximateElementCount int64
	ExpectedFPP             float64
}

// Stats returns statistics of r. It reads the clock and every word of both
// generations a few times, so it costs several passes over 2·BitSize/8
// bytes; like a Filter's statistics, it sees the generations as a rolling
// snapshot while Puts run, but always the two generations of one moment.
func (r *Rotating[T]) Stats() RotatingStats {
	g := r.gens.Load()
	now := r.clock.Now()
	cur, prev := g.cur.stats(now), g.prev.stats(now)
	union, size := g.unionBitCount(), g.cur.f.BitSize()
	return RotatingStats{
		Rotations:               g.rotations,
		EarlyRotations:          g.early,
		Current:                 cur,
		Previous:                prev,
		BitSize:                 size + g.prev.f.BitSize(),
		FillRatio:               float64(union) / float64(size),
		ApproximateElementCount: estimate.Count(union, size, g.cur.f.k),
		// 1 − (1−p₁)(1−p₂), written so that tiny rates do not round to 0.
		ExpectedFPP:        cur.ExpectedFPP + prev.ExpectedFPP - cur.ExpectedFPP*prev.ExpectedFPP,
		ExpectedInsertions: r.expectedInsertions,
		FPP:                r.fpp,
		Window:             r.window,
	}
}

func (g *generation[T]) stats(now time.Time) GenerationStats {
	return GenerationStats{
		Age:                     now.Sub(g.started),
		Inserts:                 g.insertCount(),
		FillRatio:               float64(g.f.BitCount()) / float64(g.f.BitSize()),
		ApproximateElementCount: g.f.ApproximateElementCount(),
		ExpectedFPP:             g.f.ExpectedFPP(),
	}
}

// unionBitCount returns the number of bits set in the union of g's two
// generations, counted without building the union.
func (g *generations[T]) unionBitCount() int64 {
	a, b := g.cur.f.bits, g.prev.f.bits
	var count int64
	for i := range a.WordCount() {
		count += int64(bits.OnesCount64(a.Word(i) | b.Word(i)))
	}
	return count
}
