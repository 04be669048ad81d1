package redisfilter

import (
	"context"
	"fmt"
	"math"

	"github.com/mitzbloom/mitzbloom/bloom/raw"
)

// ExpectedFPP returns the probability that MightContain returns true for a
// value that was never put, estimated from the bits set as Guava's
// expectedFpp() estimates it: what [bloom.Filter.ExpectedFPP] returns for
// a [Filter.Snapshot] taken at the same moment. It counts the bits as
// [Filter.BitCount] does, with one small reply for each MiB of the filter,
// and reads none.
func (f *Filter[T]) ExpectedFPP(ctx context.Context) (float64, error) {
	count, err := f.BitCount(ctx)
	if err != nil {
		return 0, err
	}
	return raw.ExpectedFPP(count, f.c.bitSize, f.c.k), nil
}

// ApproximateElementCount estimates the number of distinct values put in
// f from the bits set, as Guava's approximateElementCount() does: what
// [bloom.Filter.ApproximateElementCount] returns for a [Filter.Snapshot]
// taken at the same moment, math.MaxInt64 if every bit is set. It costs
// what [Filter.ExpectedFPP] does.
func (f *Filter[T]) ApproximateElementCount(ctx context.Context) (int64, error) {
	count, err := f.BitCount(ctx)
	if err != nil {
		return 0, err
	}
	return raw.ApproximateElementCount(count, f.c.bitSize, f.c.k), nil
}

// ExpectedFPP returns the probability that MightContain, called now,
// returns true for a value never put in the window: 1 − (1−p₁)(1−p₂)…
// over the generations it looks in, where each pᵢ is what
// [bloom.Filter.ExpectedFPP] returns for [Windowed.Snapshot] of the
// generation, at most about Generations+1 times the fpp w was opened
// with. It counts the bits of those generations with one small reply for
// each MiB of a generation, 4 per round trip, and reads none. A generation
// lost before its expiry is an error wrapping [ErrLost], as it is for
// MightContain.
func (w *Windowed[T]) ExpectedFPP(ctx context.Context) (float64, error) {
	counts, err := w.generationCounts(ctx, "expectedFPP")
	if err != nil {
		return 0, err
	}
	var p float64
	for _, count := range counts {
		q := raw.ExpectedFPP(count, w.c.bitSize, w.c.k)
		p = p + q - p*q // 1 − (1−p)(1−q), written so that tiny rates do not round to 0
	}
	return p, nil
}

// ApproximateElementCount estimates the number of values put in the
// generations that MightContain looks in now: the sum of what
// [bloom.Filter.ApproximateElementCount] returns for [Windowed.Snapshot]
// of each, so that a value put in several generations counts in each;
// math.MaxInt64 if a generation has every bit set. It costs what
// [Windowed.ExpectedFPP] does.
func (w *Windowed[T]) ApproximateElementCount(ctx context.Context) (int64, error) {
	counts, err := w.generationCounts(ctx, "approximateElementCount")
	if err != nil {
		return 0, err
	}
	var n int64
	for _, count := range counts {
		m := raw.ApproximateElementCount(count, w.c.bitSize, w.c.k)
		if m > math.MaxInt64-n {
			return math.MaxInt64, nil
		}
		n += m
	}
	return n, nil
}

// BitCount returns the number of bits set in the generations that
// MightContain looks in now, the last Generations and the next, added up:
// at most (Generations+1)·BitSize. It counts them as [Windowed.ExpectedFPP]
// does, and a generation lost before its expiry is an error wrapping
// [ErrLost].
func (w *Windowed[T]) BitCount(ctx context.Context) (int64, error) {
	counts, err := w.generationCounts(ctx, "bitCount")
	if err != nil {
		return 0, err
	}
	var n int64
	for _, count := range counts {
		n += count
	}
	return n, nil
}

// generationCounts returns the bits set in each generation that
// MightContain looks in now.
func (w *Windowed[T]) generationCounts(ctx context.Context, op string) ([]int64, error) {
	b := w.readBatch(op)
	return w.c.bitCounts(ctx, op, b.gens, b.now)
}

// bitCounts returns the bits set in the filter's bitmaps, in counts[0],
// or for a window in each generation of gens at the time now (Unix ms).
// It counts each chunk with BITCOUNT in read.lua, which checks the config
// in the same step, chunksPerTrip chunks per round trip, whatever their
// generations.
func (c *core[T]) bitCounts(ctx context.Context, op string, gens []int64, now int64) ([]int64, error) {
	chunks := c.chunks()
	counts := make([]int64, len(gens))
	total := len(gens) * len(chunks) // chunk i is chunks[i%len(chunks)] of gens[i/len(chunks)]
	calls := make([]call, 0, chunksPerTrip)
	for start := 0; start < total; start += chunksPerTrip {
		calls = calls[:0]
		for i := start; i < min(total, start+chunksPerTrip); i++ {
			calls = append(calls, c.readCall("count", gens[i/len(chunks)], now, chunks[i%len(chunks)]))
		}
		replies, err := c.readTrip(ctx, op, calls)
		if err != nil {
			return nil, err
		}
		for j, reply := range replies {
			n, ok := reply.(int64)
			if !ok {
				return nil, c.wrap(ctx, op, fmt.Errorf("BITCOUNT answered %T", reply))
			}
			counts[(start+j)/len(chunks)] += n
		}
	}
	return counts, nil
}

// String returns a summary of s on one line, such as
// "12 syncs, 1 full push, 0 shards pulled whole, 6705 bytes sent, 712
// received; last: sync delta: …" with the last Sync as [SyncStats.String]
// describes it.
func (s HybridStats) String() string {
	pushes := "full pushes"
	if s.FullPushes == 1 {
		pushes = "full push"
	}
	return fmt.Sprintf("%d syncs, %d %s, %d shards pulled whole, %d bytes sent, %d received; last: %v",
		s.Syncs, s.FullPushes, pushes, s.FullPulls, s.Sent, s.Received, s.Last)
}
