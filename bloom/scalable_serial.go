package bloom

import (
	"errors"
	"fmt"
	"io"

	"github.com/mitzbloom/mitzbloom/bloom/internal/hashing"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// WriteTo writes s's stages to w, oldest first, each in Guava's writeTo
// format (see [Filter.WriteTo]): complete filters back to back, each of
// which Guava's BloomFilter.readFrom reads on its own. A Scalable that never
// grew thus writes exactly the bytes of one Filter, the one
// New(f, initialExpected, fpp·(1−r)) makes, holding the same values.
// Nothing else is written; [ReadScalable] reads the stages back.
//
// Java reads the stages with readFrom until the stream ends, and a value
// might be present when any of them says so:
//
//	List<BloomFilter<T>> stages = new ArrayList<>();
//	PushbackInputStream in = new PushbackInputStream(stream);
//	for (int b; (b = in.read()) != -1; ) {
//	  in.unread(b);
//	  stages.add(BloomFilter.readFrom(in, funnel));
//	}
//	boolean mightContain = stages.stream().anyMatch(f -> f.mightContain(value));
//
// WriteTo writes the stages of one moment, even if a stage is added
// meanwhile; Puts that run concurrently with it may or may not be written.
func (s *Scalable[T]) WriteTo(w io.Writer) (int64, error) {
	l := s.stages.Load()
	if l == nil {
		return 0, s.zero("WriteTo")
	}
	var written int64
	for _, st := range l.stages {
		n, err := st.f.WriteTo(w)
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// MarshalBinary returns the bytes WriteTo would write.
func (s *Scalable[T]) MarshalBinary() ([]byte, error) {
	l := s.stages.Load()
	if l == nil {
		return nil, s.zero("MarshalBinary")
	}
	b := make([]byte, l.size())
	rest := b
	for _, st := range l.stages {
		rest = st.f.encode(rest)
	}
	return b, nil
}

// size returns the size of l's stages in Guava's format, which WriteTo
// writes.
func (l *stageList[T]) size() int {
	n := 0
	for _, st := range l.stages {
		n += st.f.encodedSize()
	}
	return n
}

// zero is the error of method for the zero Scalable, which has nothing to
// write, instead of a panic in an encoder that met one.
func (s *Scalable[T]) zero(method string) error {
	return fmt.Errorf("%w: %s of a zero Scalable; create it with NewScalable or ReadScalable", ErrInvalidArgument, method)
}

// ReadScalable reads a Scalable that [Scalable.WriteTo] wrote from r, until
// r ends, for values that f funnels. f alone is enough to read it and
// answer lookups, as the Scalable did when it was written.
//
// To go on growing, the Scalable needs what the stream does not record: the
// initial expected insertions and the false-positive probability it was
// made with ([WithSizing]), and its growth factor and tightening ratio if
// they are not the defaults ([WithGrowth], [WithTightening]). Given those,
// ReadScalable returns the Scalable that NewScalable(f, initialExpected,
// fpp, opts...) would have become, with the stages read from r, each of
// which must be the one those parameters size; without them, a Scalable that
// answers lookups, statistics and encodings, and whose Put and PutMany
// panic, since it cannot grow. Its strategy is the one of the stages read:
// [WithStrategy], if given, must name it. Each stage's insert count starts
// at its [Filter.ApproximateElementCount], at most the values it is sized
// for, so that the newest stage goes on filling where it left off.
//
// ReadScalable returns io.EOF if r is empty, and any error [ReadFrom]
// returns for a stage, such as one wrapping [ErrCorrupt] and
// io.ErrUnexpectedEOF for a stream that ends inside one. Stages that are not
// a Scalable's, of different strategies or each no larger than the one
// before, get an error wrapping ErrCorrupt. A stage that does not match the
// options gets an error wrapping [ErrIncompatible] that names both, after
// only its 6-byte header has been read when it is larger, so that r cannot
// make ReadScalable allocate much more than the bytes it delivered; so do
// bytes after the last stage that the options allow. Options that
// NewScalable would reject get its errors, before anything is read.
func ReadScalable[T any](r io.Reader, f funnel.Funnel[T], opts ...Option) (*Scalable[T], error) {
	s, err := newReadScalable(f, opts)
	if err != nil {
		return nil, err
	}
	l, err := s.readStages(r)
	if err != nil {
		return nil, err
	}
	s.install(l)
	return s, nil
}

// newReadScalable returns the Scalable that ReadScalable reads into: one
// that NewScalable would make, but without stages, if opts give the
// sizing, and otherwise a read-only one.
func newReadScalable[T any](f funnel.Funnel[T], opts []Option) (*Scalable[T], error) {
	cfg := configure(opts)
	if cfg.sized {
		s, _, err := newScalable(f, cfg.n, cfg.fpp, opts)
		if err != nil {
			return nil, err
		}
		s.strategySet = cfg.strategySet
		return s, nil
	}
	if f == nil {
		return nil, fmt.Errorf("%w: funnel is nil", ErrInvalidArgument)
	}
	return &Scalable[T]{hash: hashing.For(f), readOnly: true, funnel: f, strategy: cfg.strategy, strategySet: cfg.strategySet}, nil
}

// install makes l s's stages, and the strategy of its stages s's if s did
// not have one.
func (s *Scalable[T]) install(l *stageList[T]) {
	if !s.strategySet {
		s.strategy, s.strategySet = l.stages[0].f.strategy, true
	}
	s.stages.Store(l)
}

// readStages reads stages from r until it ends, and checks them against
// s's parameters: those NewScalable would have built them with, if s has
// them, and otherwise that they are a Scalable's, of one strategy and each
// larger than the one before.
func (s *Scalable[T]) readStages(r io.Reader) (*stageList[T], error) {
	var stages []*stage[T]
	var z stageSize // the next stage's, if s has its parameters
	if !s.readOnly {
		var err error
		if z, err = s.sizeStage(s.initialExpected, s.fpp*(1-s.tightening)); err != nil {
			return nil, err
		}
	}
	for i := 0; ; i++ {
		st, err := s.readStage(r, i, z, stages)
		if err == io.EOF {
			if i == 0 {
				return nil, io.EOF
			}
			break
		}
		if err != nil {
			return nil, err
		}
		stages = append(stages, st)
		if s.readOnly {
			continue
		}
		if z, err = s.nextSize(z); err != nil {
			// No stage can follow this one: the stream must end here.
			var b [1]byte
			if n, _ := io.ReadFull(r, b[:]); n > 0 {
				return nil, fmt.Errorf("%w: bytes after stage %d, the last one a Scalable of %s can have (%w)", ErrIncompatible, i, s.sizing(), err)
			}
			break
		}
	}
	// Every stage but the newest has a successor already.
	for _, st := range stages[:len(stages)-1] {
		st.grown.Store(true)
	}
	return &stageList[T]{stages: stages}, nil
}

// sizing returns the options that size s's stages, for errors.
func (s *Scalable[T]) sizing() string {
	return fmt.Sprintf("WithSizing(%d, %s), growth %d and tightening %s", s.initialExpected, formatFloat(s.fpp), s.growth, formatFloat(s.tightening))
}

// readStage reads stage i, after the stages before, and checks it: against
// z, the size s's parameters give it, if s has them.
func (s *Scalable[T]) readStage(r io.Reader, i int, z stageSize, before []*stage[T]) (*stage[T], error) {
	what := fmt.Sprint("stage ", i)
	var f *Filter[T]
	var err error
	if s.readOnly {
		f, err = ReadFrom(r, s.funnel)
	} else {
		want := shape{bits: int64(z.words) * 64, k: z.k}
		f, err = readPart(r, s.funnel, want.bits, func(err error) error {
			return fmt.Errorf("%w: %s: %w, but %s make it %v", ErrIncompatible, what, err, s.sizing(), want)
		})
		if err == nil {
			if got := (shape{bits: f.BitSize(), k: f.k}); got != want {
				err = fmt.Errorf("%w: %s has %v, but %s make it %v", ErrIncompatible, what, got, s.sizing(), want)
			}
		}
	}
	if err != nil {
		if err != io.EOF && !errors.Is(err, ErrIncompatible) {
			err = fmt.Errorf("%s: %w", what, err)
		}
		return nil, err
	}
	if len(before) == 0 {
		if s.strategySet && f.strategy != s.strategy {
			return nil, fmt.Errorf("%w: %s has strategy %v, but the Scalable's, which WithStrategy sets, is %v", ErrIncompatible, what, f.strategy, s.strategy)
		}
	} else if last := before[len(before)-1].f; f.strategy != last.strategy {
		return nil, fmt.Errorf("%w: not a Scalable's stages: %s has strategy %v, the one before %v", ErrCorrupt, what, f.strategy, last.strategy)
	} else if f.BitSize() <= last.BitSize() {
		return nil, fmt.Errorf("%w: not a Scalable's stages: %s has %d bits, no more than the %d of the one before", ErrCorrupt, what, f.BitSize(), last.BitSize())
	}
	if s.readOnly {
		return s.newStage(stageSize{}, f, f.ApproximateElementCount()), nil
	}
	return s.newStage(z, f, min(f.ApproximateElementCount(), z.n)), nil
}

// UnmarshalBinary replaces s's stages with those in data, which
// [Scalable.MarshalBinary] or [Scalable.WriteTo] wrote, as [ReadScalable]
// would read them. s keeps its funnel, and its sizing, growth and
// tightening if it has them, which the stages must then follow, or
// UnmarshalBinary returns an error wrapping [ErrIncompatible]. A zero
// Scalable, such as encoding/json makes for a nil *Scalable or a map value,
// takes the default funnel of T (see the package documentation) and
// becomes what ReadScalable reads without options: it answers lookups, and
// its Put panics. On error s is unchanged.
//
// UnmarshalBinary is safe to call concurrently with the other methods of a
// Scalable that is not zero: calls that run meanwhile use the old stages or
// the new ones.
func (s *Scalable[T]) UnmarshalBinary(data []byte) error {
	into := s
	if s.funnel == nil {
		fn, err := funnelOrDefault(s.funnel, "Scalable", "NewScalable or ReadScalable")
		if err != nil {
			return err
		}
		if into, err = newReadScalable(fn, nil); err != nil {
			return err
		}
	}
	l, err := into.readStages(&byteReader{data: data})
	if err == io.EOF {
		err = fmt.Errorf("%w: no data: %w", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return err
	}
	if into != s {
		*s = Scalable[T]{hash: into.hash, readOnly: true, funnel: into.funnel, strategy: into.strategy}
	}
	s.install(l)
	return nil
}
