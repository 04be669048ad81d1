package bloom

import (
	"errors"
	"fmt"
	"io"

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
	var written int64
	for _, st := range s.stages.Load().stages {
		n, err := st.f.WriteTo(w)
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// ReadScalable reads a Scalable that [Scalable.WriteTo] wrote from r, until
// r ends: it returns the Scalable NewScalable(f, initialExpected, fpp,
// opts...) would have become, with the stages read from r. Each stage's
// insert count starts at its [Filter.ApproximateElementCount], at most the
// values it is sized for, so that the newest stage goes on filling where it
// left off.
//
// ReadScalable returns io.EOF if r is empty, and any error [ReadFrom]
// returns for a stage, such as one wrapping [ErrCorrupt] and
// io.ErrUnexpectedEOF for a stream that ends inside one. A stage whose size,
// number of hash functions or strategy is not that of the stage the
// arguments predict gets an error wrapping [ErrIncompatible], after only its
// 6-byte header has been read when it is larger, so r cannot make
// ReadScalable allocate much more than the bytes it delivered. Bytes after
// the last stage the arguments allow also get ErrIncompatible. Arguments
// NewScalable rejects get its errors, before anything is read.
func ReadScalable[T any](r io.Reader, f funnel.Funnel[T], initialExpected int64, fpp float64, opts ...Option) (*Scalable[T], error) {
	s, z, err := newScalable(f, initialExpected, fpp, opts)
	if err != nil {
		return nil, err
	}
	var stages []*stage[T]
	for i := 0; ; i++ {
		st, err := s.readStage(r, z, i)
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
		if z, err = s.nextSize(z); err != nil {
			// No stage can follow this one: the stream must end here.
			var b [1]byte
			if n, _ := io.ReadFull(r, b[:]); n > 0 {
				return nil, fmt.Errorf("%w: bytes after stage %d, the last one a Scalable of these arguments can have (%w)", ErrIncompatible, i, err)
			}
			break
		}
	}
	// Every stage but the newest has a successor already.
	for _, st := range stages[:len(stages)-1] {
		st.grown.Store(true)
	}
	s.stages.Store(&stageList[T]{stages: stages})
	return s, nil
}

// readStage reads stage i, sized z, and checks that it is what NewScalable
// would have built.
func (s *Scalable[T]) readStage(r io.Reader, z stageSize, i int) (*stage[T], error) {
	bitSize := int64(z.words) * 64
	f, err := readShaped(r, s.funnel, fmt.Sprint("stage ", i), bitSize, z.k, s.strategy,
		fmt.Sprintf("this Scalable's stage %d has %d bits", i, bitSize))
	if err != nil {
		if err != io.EOF && !errors.Is(err, ErrIncompatible) {
			err = fmt.Errorf("stage %d: %w", i, err)
		}
		return nil, err
	}
	return s.newStage(z, f, min(f.ApproximateElementCount(), z.n)), nil
}
