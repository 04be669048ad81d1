package bloom

import (
	"fmt"
	"io"

	"github.com/mitzbloom/mitzbloom/bloom/internal/hashing"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// WriteTo writes r's two generations to w, the current one first, each in
// Guava's writeTo format (see [Filter.WriteTo]): two complete filters back to
// back, 2·(6 + BitSize/8) bytes, each of which Guava's BloomFilter.readFrom
// reads on its own. The window, the generations' ages and their insert counts
// are not written; [ReadRotating] reads the generations back.
//
// WriteTo writes the two generations of one moment, even if a rotation
// happens meanwhile; Puts that run concurrently with it may or may not be
// written.
func (r *Rotating[T]) WriteTo(w io.Writer) (int64, error) {
	g := r.gens.Load()
	if g == nil {
		return 0, r.zero("WriteTo")
	}
	n, err := g.cur.f.WriteTo(w)
	if err != nil {
		return n, err
	}
	m, err := g.prev.f.WriteTo(w)
	return n + m, err
}

// ReadRotating reads a Rotating that [Rotating.WriteTo] wrote from r, for
// values that f funnels, and, like [ReadFrom], reads exactly the bytes of
// its two filters. f alone is enough to read it and answer lookups, as the
// Rotating did when it was written.
//
// To go on rotating, the Rotating needs what the stream does not record:
// the expected insertions and false-positive probability it was made with
// ([WithSizing]) and its window ([WithWindow]). Given those, ReadRotating
// returns the Rotating that NewRotating(f, expectedInsertions, fpp, window,
// opts...) would return, with the two generations read from r instead of
// empty ones; without them, a Rotating that answers lookups, statistics and
// encodings, and whose Put and PutMany panic, since it cannot rotate. Its
// strategy is the one of the filters read: [WithStrategy], if given, must
// name it.
//
// The stream records no times, so ReadRotating restarts the clock: the
// current generation begins its window at the time of the call, and the
// previous one is dropped at the first rotation, a window later. Values in
// the stream are thus remembered for one to two more windows, however long
// ago they were written. Insert counts start at each generation's
// [Filter.ApproximateElementCount].
//
// ReadRotating returns io.EOF if r is empty, an error wrapping [ErrCorrupt]
// and io.ErrUnexpectedEOF if r ends after the first filter, an error
// wrapping ErrCorrupt if the two filters differ in size, number of hash
// functions or strategy, and any error [ReadFrom] returns for either filter.
// A filter that does not match the options gets an error wrapping
// [ErrIncompatible] that names both, after only its 6-byte header has been
// read when it is larger: r cannot make ReadRotating allocate more than
// NewRotating would. Options that NewRotating would reject, and WithWindow
// without WithSizing or the other way round, get errors wrapping
// [ErrInvalidArgument], before anything is read.
func ReadRotating[T any](r io.Reader, f funnel.Funnel[T], opts ...Option) (*Rotating[T], error) {
	rot, err := newReadRotating(f, opts)
	if err != nil {
		return nil, err
	}
	cur, prev, err := rot.readGenerations(r)
	if err != nil {
		return nil, err
	}
	rot.start(cur, prev)
	return rot, nil
}

// newReadRotating returns the Rotating that ReadRotating reads into: one
// that NewRotating would make, but without generations, if opts give the
// sizing and the window, and otherwise a read-only one.
func newReadRotating[T any](f funnel.Funnel[T], opts []Option) (*Rotating[T], error) {
	cfg := configure(opts)
	switch {
	case cfg.sized && cfg.windowSet:
		r, err := newRotating(f, cfg.n, cfg.fpp, cfg.window, opts)
		if err != nil {
			return nil, err
		}
		r.strategySet = cfg.strategySet
		return r, nil
	case cfg.sized:
		return nil, fmt.Errorf("%w: WithSizing without WithWindow: a Rotating needs both to go on rotating, and neither to be read for lookups", ErrInvalidArgument)
	case cfg.windowSet:
		return nil, fmt.Errorf("%w: WithWindow without WithSizing: a Rotating needs both to go on rotating, and neither to be read for lookups", ErrInvalidArgument)
	case f == nil:
		return nil, fmt.Errorf("%w: funnel is nil", ErrInvalidArgument)
	case cfg.clock == nil:
		return nil, fmt.Errorf("%w: clock is nil", ErrInvalidArgument)
	}
	return &Rotating[T]{
		hash:        hashing.For(f),
		shardShift:  64, // one shard, which only Stats reads
		readOnly:    true,
		funnel:      f,
		strategy:    cfg.strategy,
		strategySet: cfg.strategySet,
		clock:       cfg.clock,
	}, nil
}

// zero is the error of method for the zero Rotating, which has nothing to
// write, instead of a panic in an encoder that met one.
func (r *Rotating[T]) zero(method string) error {
	return fmt.Errorf("%w: %s of a zero Rotating; create it with NewRotating or ReadRotating", ErrInvalidArgument, method)
}

// MarshalBinary returns the bytes WriteTo would write.
func (r *Rotating[T]) MarshalBinary() ([]byte, error) {
	g := r.gens.Load()
	if g == nil {
		return nil, r.zero("MarshalBinary")
	}
	b := make([]byte, g.size())
	g.prev.f.encode(g.cur.f.encode(b))
	return b, nil
}

// size returns the size of g's generations in Guava's format, which WriteTo
// writes.
func (g *generations[T]) size() int {
	return 2 * g.cur.f.encodedSize()
}

// UnmarshalBinary replaces r's generations with the two in data, which
// [Rotating.MarshalBinary] or [Rotating.WriteTo] wrote, as [ReadRotating]
// would read them: the current generation begins its window now. r keeps
// its funnel, and its sizing, window and clock if it has them, which the
// generations must then match, or UnmarshalBinary returns an error wrapping
// [ErrIncompatible]. A zero Rotating, such as encoding/json makes for a nil
// *Rotating or a map value, takes the default funnel of T (see the package
// documentation) and becomes what ReadRotating reads without options: it
// answers lookups, and its Put panics. data must hold exactly the two
// filters, or the error wraps [ErrCorrupt]. On error r is unchanged.
//
// UnmarshalBinary is safe to call concurrently with the other methods of a
// Rotating that is not zero: calls that run meanwhile use the old
// generations or the new ones.
func (r *Rotating[T]) UnmarshalBinary(data []byte) error {
	if r.funnel == nil {
		fn, err := funnelOrDefault(r.funnel, "Rotating", "NewRotating or ReadRotating")
		if err != nil {
			return err
		}
		read, err := newReadRotating(fn, nil)
		if err != nil {
			return err
		}
		if err := read.unmarshalGenerations(data); err != nil {
			return err
		}
		*r = Rotating[T]{hash: read.hash, shardShift: read.shardShift, readOnly: true, funnel: fn, strategy: read.strategy, clock: read.clock}
		r.gens.Store(read.gens.Load())
		return nil
	}
	return r.unmarshalGenerations(data)
}

// unmarshalGenerations reads the two generations in data and makes them
// r's.
func (r *Rotating[T]) unmarshalGenerations(data []byte) error {
	rd := &byteReader{data: data}
	cur, prev, err := r.readGenerations(rd)
	if err == io.EOF {
		err = fmt.Errorf("%w: no data: %w", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return err
	}
	if rest := len(data) - rd.off; rest > 0 {
		return fmt.Errorf("%w: %d bytes after the two %d-byte generations", ErrCorrupt, rest, rd.off/2)
	}
	// The clock's timer, if any, stays set: when it fires it measures the
	// window from the new current generation's start.
	r.mu.Lock()
	r.restart(cur, prev)
	r.mu.Unlock()
	return nil
}

// readGenerations reads the current and the previous generation.
func (r *Rotating[T]) readGenerations(rd io.Reader) (cur, prev *Filter[T], err error) {
	cur, err = r.readGeneration(rd, "current generation", nil)
	if err != nil {
		return nil, nil, err
	}
	prev, err = r.readGeneration(rd, "previous generation", cur)
	if err == io.EOF {
		return nil, nil, fmt.Errorf("%w: stream ends after the current generation: %w", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return nil, nil, err
	}
	return cur, prev, nil
}

// readGeneration reads one generation, what, and checks it against r's
// parameters: those NewRotating would have built it with, if r has them, and
// the options' strategy, if given. The previous generation must have the
// current one's shape, cur's.
func (r *Rotating[T]) readGeneration(rd io.Reader, what string, cur *Filter[T]) (*Filter[T], error) {
	if r.readOnly && cur != nil {
		want := shapeOf(cur)
		f, err := readPart(rd, r.funnel, want.bits, func(err error) error {
			return fmt.Errorf("%w: not a Rotating's generations: the previous one is larger than the current one, of %v: %w", ErrCorrupt, want, err)
		})
		if err != nil {
			return nil, err
		}
		if got := shapeOf(f); got != want {
			return nil, fmt.Errorf("%w: not a Rotating's generations: the previous one has %v, the current one %v", ErrCorrupt, got, want)
		}
		return f, nil
	}
	if r.readOnly {
		f, err := ReadFrom(rd, r.funnel)
		if err != nil {
			return nil, err
		}
		return f, r.checkStrategy(what, f)
	}
	want := shape{bits: int64(r.words) * 64, k: r.k}
	sizing := fmt.Sprintf("WithSizing(%d, %s)", r.expectedInsertions, formatFloat(r.fpp))
	f, err := readPart(rd, r.funnel, want.bits, func(err error) error {
		return fmt.Errorf("%w: %s: %w, but %s makes generations of %v", ErrIncompatible, what, err, sizing, want)
	})
	if err != nil {
		return nil, err
	}
	if got := (shape{bits: f.BitSize(), k: f.k}); got != want {
		return nil, fmt.Errorf("%w: %s has %v, but %s makes generations of %v", ErrIncompatible, what, got, sizing, want)
	}
	if cur != nil && f.strategy != cur.strategy {
		return nil, fmt.Errorf("%w: not a Rotating's generations: the previous one has strategy %v, the current one %v", ErrCorrupt, f.strategy, cur.strategy)
	}
	return f, r.checkStrategy(what, f)
}

// checkStrategy returns an error if the options gave r a strategy other
// than f's, the generation what, which otherwise gives r its strategy.
func (r *Rotating[T]) checkStrategy(what string, f *Filter[T]) error {
	if r.strategySet && f.strategy != r.strategy {
		return fmt.Errorf("%w: %s has strategy %v, but the Rotating's, which WithStrategy sets, is %v", ErrIncompatible, what, f.strategy, r.strategy)
	}
	return nil
}

// restoredCount is the insert count a read generation starts with: its
// estimated number of values, at most what fills it.
func (r *Rotating[T]) restoredCount(f *Filter[T]) int64 {
	n := f.ApproximateElementCount()
	if !r.readOnly {
		n = min(n, max(r.expectedInsertions, 1))
	}
	return n
}
