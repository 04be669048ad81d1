package bloom

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/mitzbloom/mitzbloom/bloom/internal/hashing"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// A Rotating is a Bloom filter that remembers values for a sliding window of
// time, in constant memory. It keeps two generations, each a [Filter] sized
// for expectedInsertions values at fpp: Put adds to the current generation,
// and MightContain checks both. A new, empty generation replaces the previous
// one, and the current one becomes previous, when the window has elapsed
// since the current one began, or when it has received expectedInsertions
// values, whichever comes first.
//
// So a value is remembered for between one and two windows: MightContain
// finds it for at least a window after Put returns, and forgets it, barring
// false positives, at most two windows after its last Put, plus however late
// the [Clock]'s timer fires. The first promise assumes no generation fills
// before its window ends: a stream of more than expectedInsertions new values
// per window makes generations turn over sooner, which keeps the false
// positives bounded but shortens the memory to about expectedInsertions new
// values. [RotatingStats.EarlyRotations] counts such rotations.
//
// A value never put is reported present when either generation reports it.
// With generations whose false-positive rates are p₁ and p₂ that happens with
// probability 1 − (1−p₁)(1−p₂) ≤ p₁ + p₂, and since a generation never holds
// more than about its expected insertions, each rate is at most about fpp:
// the effective rate is up to about 2·fpp, reached just before a rotation.
// Pass fpp/2 for an overall rate of fpp. [Rotating.Stats] estimates it.
//
// A Rotating holds two generations, 2·BitSize/8 bytes (see [Size]). A
// rotation allocates the new generation and drops the oldest, which the
// garbage collector frees once no Put or MightContain still uses it.
//
// A Rotating is safe for concurrent use by multiple goroutines. Put and
// MightContain are lock-free, like a Filter's, and run concurrently with
// rotations: a rotation swaps both generations with one atomic store and
// never clears a bit, so a call that started before it finishes on the
// generations it started with. Rotations on time run in the Clock's timer
// goroutine, rotations on count in the Put that fills the generation.
//
// The zero Rotating is not usable; create one with [NewRotating] or
// [ReadRotating], or decode into it (see [Rotating.UnmarshalBinary]).
// There is nothing to close: a Rotating that is no longer referenced is
// garbage collected, its pending timer notwithstanding.
type Rotating[T any] struct {
	gens atomic.Pointer[generations[T]]
	hash hashing.Hasher[T] // one hash for both generations

	shardShift uint  // the insert counter of a hash is inserts[h2>>shardShift]
	shardLimit int64 // inserts counted in one shard that fill a generation

	// readOnly is set for a Rotating read without its sizing and window,
	// which cannot rotate: its Put panics. It has none of the fields below
	// but funnel, strategy (the options') and clock.
	readOnly bool

	funnel   funnel.Funnel[T]
	strategy strategy.Strategy
	// strategySet is set when strategy is fixed, rather than taken from
	// the first generation ReadRotating reads.
	strategySet        bool
	k, words           int
	expectedInsertions int64
	fpp                float64
	window             time.Duration
	clock              Clock

	mu sync.Mutex // serializes rotations; Put and MightContain never wait for it
}

// generations is one arrangement of the generations. It is never modified:
// a rotation stores a new one, so a reader sees both generations of one
// moment.
type generations[T any] struct {
	cur, prev        *generation[T]
	rotations, early int64
}

type generation[T any] struct {
	f       *Filter[T]
	started time.Time
	// inserts counts the Puts that set a bit here. Goroutines putting
	// different values count in different shards, picked by hash, so that
	// they do not all fight over one cache line; the generation is full when
	// any shard reaches its share of the expected insertions, which, with
	// uniform hashes and at least minShardInserts per shard, is within a few
	// percent of the total.
	inserts insertCounts
}

// insertCounts counts the values put in a filter, in the shards that
// shardsFor picks.
type insertCounts [maxShards]shard

type shard struct {
	n atomic.Int64
	_ [56]byte // pads the shard to a 64-byte cache line of its own
}

const (
	maxShards       = 8
	shardBitsMax    = 3    // log2(maxShards)
	minShardInserts = 4096 // so that the first shard to fill is within ~2% of the total
)

func (g *generation[T]) put(h1, h2 uint64) bool {
	return g.f.probe.Put(h1, h2, g.f.k, g.f.bits)
}

func (g *generation[T]) has(h1, h2 uint64) bool {
	return g.f.probe.MightContain(h1, h2, g.f.k, g.f.bits)
}

func (g *generation[T]) insertCount() int64 { return g.inserts.total() }

// total returns the sum of c's shards.
func (c *insertCounts) total() int64 {
	var n int64
	for i := range c {
		n += c[i].n.Load()
	}
	return n
}

// spread sets c's shards, of which shardsFor gave shift, to count in all.
func (c *insertCounts) spread(count int64, shift uint) {
	shards := int64(1) << (64 - shift)
	for i := range shards {
		c[i].n.Store(count / shards)
	}
	c[0].n.Add(count % shards)
}

// shardsFor returns the shift and the per-shard limit of the insert counts
// of a filter that n values fill: the insert counter of a hash is
// inserts[h2>>shift], and the filter is full when one shard counts limit.
func shardsFor(n int64) (shift uint, limit int64) {
	shardBits := uint(0)
	for shardBits < shardBitsMax && n>>(shardBits+1) >= minShardInserts {
		shardBits++
	}
	return 64 - shardBits, (n + 1<<shardBits - 1) >> shardBits // a shift by 64 gives 0: one shard
}

// NewRotating returns an empty Rotating whose generations are each sized
// for expectedInsertions values at a false-positive probability of fpp, as
// New(f, expectedInsertions, fpp) sizes a Filter, and which starts a new
// generation every window. It allocates both generations, and sets a timer
// on the clock for the end of the first window.
//
// NewRotating returns an error wrapping [ErrInvalidArgument] when window is
// not positive, f or the clock is nil, or New would return an error for the
// same sizing.
func NewRotating[T any](f funnel.Funnel[T], expectedInsertions int64, fpp float64, window time.Duration, opts ...Option) (*Rotating[T], error) {
	r, err := newRotating(f, expectedInsertions, fpp, window, opts)
	if err != nil {
		return nil, err
	}
	r.strategySet = true
	r.start(r.newFilter(), r.newFilter())
	return r, nil
}

// newRotating checks the arguments and sizes the generations, without
// allocating them.
func newRotating[T any](f funnel.Funnel[T], n int64, p float64, window time.Duration, opts []Option) (*Rotating[T], error) {
	if f == nil {
		return nil, fmt.Errorf("%w: funnel is nil", ErrInvalidArgument)
	}
	if window <= 0 {
		return nil, fmt.Errorf("%w: window (%v) must be > 0", ErrInvalidArgument, window)
	}
	s, err := size(n, p, opts)
	if err == nil {
		err = s.fits()
	}
	if err != nil {
		return nil, err
	}
	clock := s.cfg.clock
	if clock == nil {
		return nil, fmt.Errorf("%w: clock is nil", ErrInvalidArgument)
	}
	// Like New, a generation for 0 values is sized for 1, and holds 1.
	shift, limit := shardsFor(max(n, 1))
	return &Rotating[T]{
		hash:               hashing.For(f),
		shardShift:         shift,
		shardLimit:         limit,
		funnel:             f,
		strategy:           s.cfg.strategy,
		k:                  s.k,
		words:              s.words,
		expectedInsertions: n,
		fpp:                p,
		window:             window,
		clock:              clock,
	}, nil
}

func (r *Rotating[T]) newFilter() *Filter[T] {
	return newFilter(r.funnel, r.strategy, r.k, bitarray.New(r.words), false)
}

// start installs cur and prev as the generations of a new r, and sets the
// timer of the first window if r rotates.
func (r *Rotating[T]) start(cur, prev *Filter[T]) {
	if !r.strategySet {
		r.strategy, r.strategySet = cur.strategy, true
	}
	r.restart(cur, prev)
	if !r.readOnly {
		r.schedule(r.window)
	}
}

// restart makes cur and prev r's generations, cur starting now. Their
// insert counts start at their estimated numbers of values, at most what
// fills a generation.
func (r *Rotating[T]) restart(cur, prev *Filter[T]) {
	now := r.clock.Now()
	// The previous generation is taken to have been current for the window
	// before this one; only Stats reports its age.
	r.gens.Store(&generations[T]{
		cur:  r.newGeneration(cur, now, r.restoredCount(cur)),
		prev: r.newGeneration(prev, now.Add(-r.window), r.restoredCount(prev)),
	})
}

// newGeneration wraps f, spreading count over its insert counters.
func (r *Rotating[T]) newGeneration(f *Filter[T], started time.Time, count int64) *generation[T] {
	g := &generation[T]{f: f, started: started}
	g.inserts.spread(count, r.shardShift)
	return g
}

// Put adds v to r's current generation and reports whether v is new: true
// means that neither generation might have contained v, so this is the first
// time v is seen within what r remembers. Single-threaded, Put returns the
// opposite of what MightContain(v) would have returned just before. As with
// [Filter.Put], two goroutines putting the same new value at once may both
// get true.
//
// With the built-in funnels Put does not allocate, except for the Put that
// fills a generation, which allocates the next one (BitSize/8 bytes).
//
// Put panics on a Rotating that [ReadRotating] read, or that was decoded
// into a zero Rotating, without the sizing and the window it needs to
// rotate: putting into it would fill its generations past what they are
// sized for, however long the window.
func (r *Rotating[T]) Put(v T) bool {
	if r.readOnly {
		r.panicReadOnly()
	}
	g := r.gens.Load()
	h1, h2 := r.hash.Sum128(v)
	return r.putHash(g, h1, h2)
}

// putHash puts the value whose hash is (h1, h2), as Put does, starting
// with the generations g.
func (r *Rotating[T]) putHash(g *generations[T], h1, h2 uint64) bool {
	isNew := r.putIn(g, h1, h2) && !g.prev.has(h1, h2)
	r.settle(g, h1, h2)
	return isNew
}

// settle puts the hash again in the current generation if a rotation
// replaced g since the hash was put in g's current one. A value must end up
// in a generation that was still current after its bits were set in it.
// One that a rotation had already made previous would be dropped by the
// next rotation, possibly much less than a window later, so if a rotation
// happened meanwhile the value goes in again. That costs one more atomic
// load, of a line every core holds shared.
//
// settle is small enough to inline, and the loop that puts again, which
// runs only after a rotation, is a call of its own: with the loop inline
// it was a call on every Put, measurably slower in the caches
// (BenchmarkRotatingPut).
func (r *Rotating[T]) settle(g *generations[T], h1, h2 uint64) {
	if r.gens.Load() != g {
		r.putAgain(g, h1, h2)
	}
}

// putAgain puts the hash in the current generation until none replaced
// the one it was put in, g first; see settle.
func (r *Rotating[T]) putAgain(g *generations[T], h1, h2 uint64) {
	for {
		now := r.gens.Load()
		if now == g {
			return
		}
		g = now
		r.putIn(g, h1, h2)
	}
}

// putIn puts the hash in g's current generation, counts it there if it set
// a bit, and starts a new generation if that filled g's current one. Puts
// that run while the new generation is being allocated still go into the
// full one, which thus may receive a few values more than it was sized for.
func (r *Rotating[T]) putIn(g *generations[T], h1, h2 uint64) bool {
	cur := g.cur
	if !cur.put(h1, h2) {
		return false
	}
	if cur.inserts[h2>>r.shardShift&(maxShards-1)].n.Add(1) >= r.shardLimit {
		r.rotateFull(g)
	}
	return true
}

// MightContain reports whether v might be in either of r's generations;
// false means v was certainly not put since the previous generation began,
// which, unless generations fill early, covers the last window. With the
// built-in funnels, MightContain does not allocate.
func (r *Rotating[T]) MightContain(v T) bool {
	h1, h2 := r.hash.Sum128(v)
	g := r.gens.Load()
	return g.cur.has(h1, h2) || g.prev.has(h1, h2)
}

// panicReadOnly panics for a Put into a read-only r.
func (r *Rotating[T]) panicReadOnly() {
	panic("bloom: Put into a Rotating read without WithSizing and WithWindow, which cannot rotate; read it with ReadRotating(r, f, bloom.WithSizing(n, fpp), bloom.WithWindow(window)) to go on putting")
}

// rotateFull starts a new generation because g's current one is full,
// unless another rotation already did.
func (r *Rotating[T]) rotateFull(g *generations[T]) {
	// TryLock, so that a Put never waits. If another rotation holds the
	// lock, it either replaces g already or leaves g's counter at its limit,
	// so that the next insert counted there tries again.
	if !r.mu.TryLock() {
		return
	}
	defer r.mu.Unlock()
	if r.gens.Load() == g {
		r.rotate(g, r.clock.Now(), true)
	}
}

// rotate replaces g, the current generations, with a new current generation
// that starts at now and g's current one as previous. r.mu must be held.
func (r *Rotating[T]) rotate(g *generations[T], now time.Time, early bool) *generations[T] {
	next := &generations[T]{
		cur:       r.newGeneration(r.newFilter(), now, 0),
		prev:      g.cur,
		rotations: g.rotations + 1,
		early:     g.early,
	}
	if early {
		next.early++
	}
	r.gens.Store(next)
	return next
}

// schedule sets the clock's timer to call r.tick after d. The timer holds
// only a weak pointer to r, so that a Rotating nobody uses is collected
// rather than kept alive by its own timer: the timer then fires once more,
// finds nothing, and is not set again.
func (r *Rotating[T]) schedule(d time.Duration) {
	wp := weak.Make(r)
	r.clock.AfterFunc(d, func() {
		if r := wp.Value(); r != nil {
			r.tick()
		}
	})
}

// tick starts a new generation if the current one's window has elapsed, and
// sets the timer for the end of the current window. The timer may fire
// early, late, or after a rotation on count began a later window: the clock,
// not the timer, decides.
func (r *Rotating[T]) tick() {
	r.mu.Lock()
	now := r.clock.Now()
	g := r.gens.Load()
	if end := g.cur.started.Add(r.window); !now.Before(end) {
		g = r.rotate(g, now, false)
	}
	next := g.cur.started.Add(r.window).Sub(now)
	r.mu.Unlock()
	r.schedule(next)
}

// String returns a short description of r, such as
// "bloom.Rotating{funnel.String MURMUR128_MITZ_64 2×9600 bits, 7 hash functions, window 1m0s}".
// A Rotating that cannot rotate says "read-only" for its window.
func (r *Rotating[T]) String() string {
	g := r.gens.Load()
	if g == nil {
		return "bloom.Rotating{}"
	}
	f := g.cur.f
	window := "read-only"
	if !r.readOnly {
		window = "window " + r.window.String()
	}
	return fmt.Sprintf("bloom.Rotating{%s %v 2×%d bits, %d hash functions, %s}", funnelName(r.funnel), f.strategy, f.BitSize(), f.k, window)
}
