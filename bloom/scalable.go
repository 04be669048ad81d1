package bloom

import (
	"fmt"
	"math"
	"runtime"
	"sync/atomic"

	"github.com/mitzbloom/mitzbloom/bloom/internal/hashing"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// A Scalable is a Bloom filter that grows: it keeps its false-positive
// probability within fpp however many values it receives, where a [Filter]
// sized for too few answers "maybe" to almost everything. It is the scalable
// Bloom filter of Almeida, Baquero, Preguiça and Hutchison (2007): a list of
// stages, each a Filter in Guava's format. Stage i is sized, as [New] sizes a
// filter, for
//
//	nᵢ = initialExpected · sⁱ values at a rate of pᵢ = fpp · (1−r) · rⁱ,
//
// where s is the growth factor ([WithGrowth], 2 by default) and r the
// tightening ratio ([WithTightening], 0.9 by default). Put adds a value
// that no stage might hold yet to the newest stage, and once that stage has
// received its nᵢ values it adds the next one. MightContain asks every stage, newest first. A value never
// put is reported present when any stage reports it, which happens with a
// probability of at most the sum of the stages' rates, fpp·(1−r)·(1 + r +
// r² + …) < fpp, however many stages there are. There are no false
// negatives. (A full stage's rate is within a few percent of the one it is
// sized for, either way, as Guava's rounding of k makes it; with a small r,
// which gives nearly all of fpp to the first stages, the sum can thus pass
// fpp by a few percent once they are full.)
//
// What that costs, against one Filter sized for the number of values it
// ends up holding: memory, since each stage is sized for a rate below fpp,
// and time, since a lookup of an absent value looks at every stage. The
// number of stages grows with the logarithm, base s, of how far the values
// outgrew initialExpected: 10 stages at 1,000 times with the defaults. Each
// stage of the defaults takes about 1.44·log₂(1/pᵢ) bits a value, and with
// p = 0.01 and 1,000 values grown to 1,000,000 the ten stages take 1.72
// times the bits of New(f, 1_000_000, 0.01). The ratio is lowest just
// before a new stage is added and highest just after, when the newest
// stage, as large as all the others together, is still nearly empty: 3.2
// times at 1,100,000 values. A larger s means fewer stages, and so faster
// lookups of absent values, but a worse ratio after a growth (s = 4: 2.2
// times at 1,000,000 values, 4.5 at 2,000,000); a smaller r means fewer
// bits in the first stages but more in the later ones (r = 0.5: 2.4 times
// at 1,000,000, and k grows by one hash function a stage instead of one
// every seven). The defaults are those the paper recommends for slow
// growth.
//
// A Scalable is safe for concurrent use by multiple goroutines. Put and
// MightContain are lock-free like a Filter's, and run concurrently with
// the addition of a stage: the stages are an immutable list that an atomic
// pointer replaces with a longer one, exactly once for each stage that
// fills. A stage is never removed or cleared, but by [Scalable.Clear], so
// a Put that lands in a stage just as it fills and a newer one is added is
// still found by every later MightContain. Such Puts may give a stage a few values more than its
// nᵢ, at most about 3% more: past that, a Put yields to the scheduler
// until the next stage is in, the one wait in a Scalable. The Put that
// fills a stage allocates the next one.
//
// Stages stop being added when the next one could not be built: when it
// would need more than 2³¹−1 words (16 GiB) or more than 255 hash
// functions, or nᵢ would overflow an int64. The newest stage then takes
// every further value and the rate climbs past fpp. [Scalable.Stats]
// reports the stages.
//
// The zero Scalable is not usable; create one with [NewScalable] or
// [ReadScalable], or decode into it (see [Scalable.UnmarshalBinary]).
type Scalable[T any] struct {
	stages atomic.Pointer[stageList[T]]
	hash   hashing.Hasher[T] // one hash for every stage

	// readOnly is set for a Scalable read without its sizing, which cannot
	// grow: its Put panics. It has none of the fields below but funnel and
	// strategy (the options').
	readOnly bool

	funnel   funnel.Funnel[T]
	opts     []Option // the options of every stage's size
	strategy strategy.Strategy
	// strategySet is set when strategy is fixed, rather than taken from
	// the first stage ReadScalable reads.
	strategySet     bool
	initialExpected int64
	fpp             float64
	growth          int64
	tightening      float64
}

// stageList is the stages of one moment, oldest first. It is never
// modified: adding a stage stores a new list.
type stageList[T any] struct {
	stages []*stage[T]
}

func (l *stageList[T]) newest() *stage[T] { return l.stages[len(l.stages)-1] }

// stage is one filter of a Scalable, sized for expected values at fpp.
type stage[T any] struct {
	f        *Filter[T]
	expected int64
	fpp      float64
	// inserts counts the Puts that set a bit here, in shards as a Rotating's
	// generations count them (see generation); the stage is full when a
	// shard reaches shardLimit.
	inserts    insertCounts
	shardShift uint
	shardLimit int64
	// grown is set by the one Put that adds the next stage after this one,
	// and final by that Put when no next stage can be built.
	grown, final atomic.Bool
}

func (st *stage[T]) has(h1, h2 uint64) bool {
	return st.f.probe.MightContain(h1, h2, st.f.k, st.f.bits)
}

// NewScalable returns an empty Scalable whose first stage is sized for
// initialExpected values, as New(f, initialExpected, fpp·(1−r)) sizes a
// Filter (r is the tightening ratio, see [WithTightening]), and which grows
// so that its false-positive probability stays below fpp. It allocates the
// first stage only.
//
// NewScalable returns an error wrapping [ErrInvalidArgument] when f is nil,
// the growth factor is less than 2, the tightening ratio is not in (0, 1),
// or New would return an error for the first stage's sizing.
func NewScalable[T any](f funnel.Funnel[T], initialExpected int64, fpp float64, opts ...Option) (*Scalable[T], error) {
	s, first, err := newScalable(f, initialExpected, fpp, opts)
	if err != nil {
		return nil, err
	}
	s.strategySet = true
	s.stages.Store(&stageList[T]{stages: []*stage[T]{s.newStage(first, nil, 0)}})
	return s, nil
}

// stageSize is the sizing of one stage: for n values at p.
type stageSize struct {
	n int64
	p float64
	sizing
}

// newScalable checks the arguments and sizes the first stage, without
// allocating it.
func newScalable[T any](f funnel.Funnel[T], n int64, p float64, opts []Option) (*Scalable[T], stageSize, error) {
	if f == nil {
		return nil, stageSize{}, fmt.Errorf("%w: funnel is nil", ErrInvalidArgument)
	}
	cfg := configure(opts)
	if cfg.growth < 2 {
		return nil, stageSize{}, fmt.Errorf("%w: growth factor (%d) must be >= 2", ErrInvalidArgument, cfg.growth)
	}
	if !(cfg.tightening > 0 && cfg.tightening < 1) {
		return nil, stageSize{}, fmt.Errorf("%w: tightening ratio (%v) must be in (0, 1)", ErrInvalidArgument, cfg.tightening)
	}
	// fpp is checked as New checks it, before it is split among the stages.
	if _, err := size(n, p, opts); err != nil {
		return nil, stageSize{}, err
	}
	s := &Scalable[T]{
		hash:            hashing.For(f),
		funnel:          f,
		opts:            opts,
		strategy:        cfg.strategy,
		initialExpected: max(n, 1), // like New, sized for 1 when 0
		fpp:             p,
		growth:          int64(cfg.growth),
		tightening:      cfg.tightening,
	}
	first, err := s.sizeStage(s.initialExpected, p*(1-cfg.tightening))
	if err != nil {
		return nil, stageSize{}, err
	}
	return s, first, nil
}

// sizeStage sizes a stage of n values at p, or returns an error if it
// cannot be built on this platform (on a 32-bit one, 2 GiB at most).
func (s *Scalable[T]) sizeStage(n int64, p float64) (stageSize, error) {
	z, err := size(n, p, s.opts)
	if err == nil {
		err = z.fits()
	}
	return stageSize{n: n, p: p, sizing: z}, err
}

// nextSize sizes the stage after one of z, or returns an error if it
// cannot be built. The rates are products rather than powers of r, so that
// a Java program computing them with the same multiplications gets the
// same doubles, and so the same stages, where Math.pow and math.Pow may
// differ in the last bit.
func (s *Scalable[T]) nextSize(z stageSize) (stageSize, error) {
	if z.n > math.MaxInt64/s.growth {
		return stageSize{}, fmt.Errorf("%w: the stage after one of %d values would hold more than %d", ErrInvalidArgument, z.n, int64(math.MaxInt64))
	}
	return s.sizeStage(z.n*s.growth, z.p*s.tightening)
}

// newStage wraps a filter of size z, or a new empty one if f is nil, with
// insert counters starting at count.
func (s *Scalable[T]) newStage(z stageSize, f *Filter[T], count int64) *stage[T] {
	if f == nil {
		f = newFilter(s.funnel, s.strategy, z.k, bitarray.New(z.words), false)
	}
	shift, limit := shardsFor(z.n)
	st := &stage[T]{f: f, expected: z.n, fpp: z.p, shardShift: shift, shardLimit: limit}
	st.inserts.spread(count, shift)
	return st
}

// Put adds v to s and reports whether v is new: true means that no stage
// might have contained v before. Single-threaded, Put returns the opposite
// of what MightContain(v) would have returned just before. As with
// [Filter.Put], two goroutines putting the same new value at once may both
// get true. A value some stage might contain is not put again, so that it
// takes no room in the newest stage.
//
// With the built-in funnels Put does not allocate, except for the Put that
// fills a stage, which allocates the next one.
//
// Put panics on a Scalable that [ReadScalable] read, or that was decoded
// into a zero Scalable, without the sizing it needs to grow: putting into
// it would fill its newest stage past what it is sized for, and its
// false-positive probability past the one it was made with.
func (s *Scalable[T]) Put(v T) bool {
	if s.readOnly {
		s.panicReadOnly()
	}
	h1, h2 := s.hash.Sum128(v)
	l := s.stages.Load()
	if l.contains(h1, h2) {
		return false
	}
	return s.putNewest(l, h1, h2)
}

// panicReadOnly panics for a Put into a read-only s.
func (s *Scalable[T]) panicReadOnly() {
	panic("bloom: Put into a Scalable read without WithSizing, which cannot grow; read it with ReadScalable(r, f, bloom.WithSizing(initialExpected, fpp)) to go on putting")
}

// contains reports whether any stage of l might contain the hash, asking
// the newest, which holds the most values, first.
func (l *stageList[T]) contains(h1, h2 uint64) bool {
	for i := len(l.stages) - 1; i >= 0; i-- {
		if l.stages[i].has(h1, h2) {
			return true
		}
	}
	return false
}

// putNewest puts the hash in l's newest stage, counts it there if it set a
// bit, and adds a stage if that filled it. If a stage was added since l
// was loaded the value still goes in l's newest stage, which every later
// lookup still reads.
func (s *Scalable[T]) putNewest(l *stageList[T], h1, h2 uint64) bool {
	st := l.newest()
	if !st.f.probe.Put(h1, h2, st.f.k, st.f.bits) {
		return false
	}
	if c := st.inserts[h2>>st.shardShift&(maxShards-1)].n.Add(1); c >= st.shardLimit {
		s.grow(l, c >= st.shardLimit+st.shardLimit/overfill)
	}
	return true
}

// overfill bounds how far past its size a stage fills while the next one
// is being added: to 1/overfill more values.
const overfill = 32

// grow adds a stage after l's newest, unless one was added already or is
// being added. Exactly one Put wins the newest stage's grown flag, so one
// stage is added per stage that fills. Puts that lose it go on putting in
// the full stage while the winner allocates the next one, until, with
// wait set, a Put finds the stage 1/overfill past full: it then yields
// until the next stage is in. Otherwise a winner descheduled before it
// installs the stage, on a machine with more goroutines putting than
// cores, would let the others overfill the stage by thousands of values,
// and its false-positive rate would climb far past its share.
func (s *Scalable[T]) grow(l *stageList[T], wait bool) {
	last := l.newest()
	if last.grown.Load() || !last.grown.CompareAndSwap(false, true) {
		if wait {
			for s.stages.Load() == l && !last.final.Load() {
				runtime.Gosched()
			}
		}
		return
	}
	z, err := s.nextSize(stageSize{n: last.expected, p: last.fpp})
	if err != nil {
		last.final.Store(true) // no larger stage can be built: it takes the rest
		return
	}
	// Only the holder of last's flag adds the stage after it, so no other
	// Put can have replaced l; a Clear or an UnmarshalBinary can have, and
	// then the new stage is not wanted.
	stages := make([]*stage[T], len(l.stages), len(l.stages)+1)
	copy(stages, l.stages)
	s.stages.CompareAndSwap(l, &stageList[T]{stages: append(stages, s.newStage(z, nil, 0))})
}

// MightContain reports whether v might have been put in s; false means it
// certainly was not. It looks at the newest stage first. With the built-in
// funnels, MightContain does not allocate.
func (s *Scalable[T]) MightContain(v T) bool {
	h1, h2 := s.hash.Sum128(v)
	return s.stages.Load().contains(h1, h2)
}

// bitSize returns the number of bits in all of l's stages.
func (l *stageList[T]) bitSize() int64 {
	var n int64
	for _, st := range l.stages {
		n += st.f.BitSize()
	}
	return n
}

// ApproximateElementCount returns the number of distinct values put in s,
// as counted by the Puts that set a bit in a stage. Unlike
// [Filter.ApproximateElementCount] it reads no bits, only one counter per
// stage and CPU cache line of counters, so it is cheap enough to call
// often. It misses the values a stage falsely reported present when they
// were put, a fraction of about fpp. After [ReadScalable] it starts from
// each stage's Filter.ApproximateElementCount.
func (s *Scalable[T]) ApproximateElementCount() int64 {
	var n int64
	for _, st := range s.stages.Load().stages {
		n += st.inserts.total()
	}
	return n
}

// String returns a short description of s, such as
// "bloom.Scalable{funnel.String MURMUR128_MITZ_64 3 stages, 67200 bits, growth 2, tightening 0.9}".
// A Scalable that cannot grow says "read-only" for its growth and
// tightening.
func (s *Scalable[T]) String() string {
	l := s.stages.Load()
	if l == nil {
		return "bloom.Scalable{}"
	}
	growth := "read-only"
	if !s.readOnly {
		growth = fmt.Sprintf("growth %d, tightening %s", s.growth, formatFloat(s.tightening))
	}
	return fmt.Sprintf("bloom.Scalable{%s %v %d stages, %d bits, %s}",
		funnelName(s.funnel), l.stages[0].f.strategy, len(l.stages), l.bitSize(), growth)
}
