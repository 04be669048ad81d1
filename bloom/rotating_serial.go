package bloom

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
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

// ReadRotating reads a Rotating that [Rotating.WriteTo] wrote from r: it
// returns the Rotating NewRotating(f, expectedInsertions, fpp, window,
// opts...) would return, with the two generations read from r instead of
// empty ones. Like [ReadFrom] it reads exactly the bytes of the two filters.
//
// The stream records no times, so ReadRotating restarts the clock: the
// current generation begins its window at the time of the call, and the
// previous one is dropped at the first rotation, a window later. Values in
// the stream are thus remembered for one to two more windows, however long
// ago they were written. Insert counts start at each generation's
// [Filter.ApproximateElementCount].
//
// ReadRotating returns io.EOF if r is empty, an error wrapping [ErrCorrupt]
// and io.ErrUnexpectedEOF if r ends after the first filter, and any error
// [ReadFrom] returns for either filter. A filter whose size, number of hash
// functions or strategy differs from those of NewRotating's generations gets
// an error wrapping [ErrIncompatible], after only its 6-byte header has been
// read when it is larger: r cannot make ReadRotating allocate more than
// NewRotating would. Arguments NewRotating rejects get its errors, before
// anything is read.
func ReadRotating[T any](r io.Reader, f funnel.Funnel[T], expectedInsertions int64, fpp float64, window time.Duration, opts ...Option) (*Rotating[T], error) {
	rot, err := newRotating(f, expectedInsertions, fpp, window, opts)
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

// zero is the error of method for the zero Rotating, which has nothing to
// write, instead of a panic in an encoder that met one.
func (r *Rotating[T]) zero(method string) error {
	return fmt.Errorf("%w: %s of a zero Rotating; create it with NewRotating or ReadRotating", ErrInvalidArgument, method)
}

// MarshalBinary returns the bytes WriteTo would write.
func (r *Rotating[T]) MarshalBinary() ([]byte, error) {
	if r.gens.Load() == nil {
		return nil, r.zero("MarshalBinary")
	}
	return r.AppendBinary(make([]byte, 0, 2*(HeaderSize+8*r.words)))
}

// AppendBinary appends the bytes WriteTo would write to b and returns the
// extended slice.
func (r *Rotating[T]) AppendBinary(b []byte) ([]byte, error) {
	g := r.gens.Load()
	if g == nil {
		return b, r.zero("AppendBinary")
	}
	b, _ = g.cur.f.AppendBinary(b)
	return g.prev.f.AppendBinary(b)
}

// UnmarshalBinary replaces r's generations with the two in data, which
// [Rotating.MarshalBinary] or [Rotating.WriteTo] wrote, keeping r's funnel,
// sizing, window and clock, as [ReadRotating] would read them: the current
// generation begins its window now. The generations must have the size,
// number of hash functions and strategy of r's, or UnmarshalBinary returns
// an error wrapping [ErrIncompatible]; data must hold exactly the two
// filters, or the error wraps [ErrCorrupt]. On error r is unchanged.
// UnmarshalBinary is safe to call concurrently with r's other methods:
// calls that run meanwhile use the old generations or the new ones.
func (r *Rotating[T]) UnmarshalBinary(data []byte) error {
	if r.funnel == nil {
		return fmt.Errorf("%w: UnmarshalBinary on a Rotating with no funnel; create it with NewRotating or ReadRotating", ErrInvalidArgument)
	}
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
	// The clock's timer stays set: when it fires it measures the window
	// from the new current generation's start.
	r.mu.Lock()
	r.restart(cur, prev)
	r.mu.Unlock()
	return nil
}

// readGenerations reads the current and the previous generation.
func (r *Rotating[T]) readGenerations(rd io.Reader) (cur, prev *Filter[T], err error) {
	cur, err = r.readGeneration(rd, "current")
	if err != nil {
		return nil, nil, err
	}
	prev, err = r.readGeneration(rd, "previous")
	if err == io.EOF {
		return nil, nil, fmt.Errorf("%w: stream ends after the current generation: %w", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return nil, nil, err
	}
	return cur, prev, nil
}

// readGeneration reads one generation and checks that it is what
// NewRotating would have built.
func (r *Rotating[T]) readGeneration(rd io.Reader, which string) (*Filter[T], error) {
	bitSize := int64(r.words) * 64
	return readShaped(rd, r.funnel, which+" generation", bitSize, r.k, r.strategy,
		fmt.Sprintf("this Rotating has %d bits per generation", bitSize))
}

// readShaped reads one filter, the part called what of a larger whole,
// and checks that it has bitSize bits, k hash functions and strategy s.
// A larger filter is refused after its header, with note appended.
func readShaped[T any](rd io.Reader, fn funnel.Funnel[T], what string, bitSize int64, k int, s strategy.Strategy, note string) (*Filter[T], error) {
	f, err := ReadFromLimit(rd, fn, bitSize)
	if errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("%w: %s: %w; %s", ErrIncompatible, what, err, note)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case f.BitSize() != bitSize:
		return nil, fmt.Errorf("%w: %s has %d bits, want %d", ErrIncompatible, what, f.BitSize(), bitSize)
	case f.k != k:
		return nil, fmt.Errorf("%w: %s has %d hash functions, want %d", ErrIncompatible, what, f.k, k)
	case f.strategy != s:
		return nil, fmt.Errorf("%w: %s has strategy %v, want %v", ErrIncompatible, what, f.strategy, s)
	}
	return f, nil
}

// restoredCount is the insert count a read generation starts with: its
// estimated number of values, at most what fills it.
func (r *Rotating[T]) restoredCount(f *Filter[T]) int64 {
	return min(f.ApproximateElementCount(), r.expectedInsertions)
}
