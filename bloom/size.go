package bloom

import (
	"fmt"
	"math"

	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/internal/javamath"
	"github.com/mitzbloom/mitzbloom/internal/options"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// Guava computes ln 2 with Math.log(2) and its square as a product; both are
// exact constants that Java and Go agree on.
const (
	ln2   = 0.6931471805599453
	ln2sq = 0.4804530139182014 // ln2 * ln2
)

// maxHashFunctions is the largest k: Guava's serialized form stores it in one
// unsigned byte.
const maxHashFunctions = 255

// An Option configures [New], [Size], [NewRotating] or [ReadRotating]. The
// filters that other packages of this project keep elsewhere, such as
// redisfilter's, take the same Options, beside options of their own that
// the functions of package bloom refuse.
type Option func(options.Settings) options.Settings

// WithStrategy selects the strategy that maps hashes to bits. The default is
// [strategy.Murmur128Mitz64], as in all of Guava's public create methods.
func WithStrategy(s strategy.Strategy) Option {
	return func(o options.Settings) options.Settings { o.Strategy = s; return o }
}

// WithLegacyHashCount computes the number of hash functions as Guava 31.x
// and earlier do, k = max(1, round(m/n·ln 2)) from the unrounded bit count m,
// instead of current Guava's k = max(1, round(-ln p / ln 2)). The two differ
// only for tiny n (for p = 0.01, at n = 1 and n = 3); use it to build filters
// identical to those of a Java service on Guava 31.x. The default is current
// Guava's rule.
func WithLegacyHashCount() Option {
	return func(o options.Settings) options.Settings { o.LegacyHashCount = true; return o }
}

// WithUnsynchronizedWrites makes Put and PutMany set bits with plain memory
// writes instead of atomic ones, for a filter that one goroutine fills. That
// makes filling a filter two to three times faster on x86-64, where an atomic
// write is a locked instruction that waits for every memory access before it
// (BenchmarkFill). It changes neither the bits a filter sets nor its
// serialized form, and Size ignores it.
//
// The filter is then not safe for concurrent writes, like a map: methods
// that only read it (MightContain, MightContainMany, the counts, Equal,
// Copy, WriteTo, MarshalBinary) may run concurrently with each other, but
// Put, PutMany and PutAll must not run concurrently with any other method.
// A bit set by a write that races another can be silently lost; the race
// detector reports such races. To share a filter filled this way with
// concurrent writers, PutAll it into a filter made without this option.
// [NewRotating] rejects it: a Rotating filter is for concurrent use.
func WithUnsynchronizedWrites() Option {
	return func(o options.Settings) options.Settings { o.PlainWrites = true; return o }
}

// WithClock makes a [Rotating] tell time, and learn that a window has ended,
// with c. The default is the system's clock, time.Now and time.AfterFunc;
// tests pass a [ManualClock]. A Filter has no clock: New and Size ignore it.
// A windowed filter in Redis (redisfilter.OpenWindowed) reads its Now.
func WithClock(c Clock) Option {
	return func(o options.Settings) options.Settings { o.Clock = c; return o }
}

// sizing is what New builds: words 64-bit words and k hash functions.
type sizing struct {
	words int
	k     int
	cfg   options.Settings
}

// Size reports the bit size and the number of hash functions New would use
// for the same arguments, or the error New would return. Size allocates
// nothing when called without options.
//
// Size is Guava's sizing on every platform. On a 32-bit platform New also
// refuses a filter of more than 2 GiB, which the address space cannot hold,
// where Size still reports the size Guava gives it, for a filter kept
// elsewhere (as in redisfilter) or built by Java.
//
// Like Guava, Size treats expectedInsertions == 0 as 1 and rounds the optimal
// number of bits up to a multiple of 64.
func Size(expectedInsertions int64, fpp float64, opts ...Option) (bitSize int64, numHashFunctions int, err error) {
	s, err := size(expectedInsertions, fpp, opts)
	if err != nil {
		return 0, 0, err
	}
	return int64(s.words) * 64, s.k, nil
}

func size(n int64, p float64, opts []Option) (sizing, error) {
	cfg := options.Apply(opts)
	if len(cfg.Others) > 0 {
		return sizing{}, fmt.Errorf("%w: %s is not an option of package bloom", ErrInvalidArgument, cfg.Others[0].Name)
	}
	// Guava's checks, in Guava's order and with its wording.
	if n < 0 {
		return sizing{}, fmt.Errorf("%w: expected insertions (%d) must be >= 0", ErrInvalidArgument, n)
	}
	if !(p > 0) {
		return sizing{}, fmt.Errorf("%w: false positive probability (%s) must be > 0.0", ErrInvalidArgument, javamath.FormatDouble(p))
	}
	if !(p < 1) {
		return sizing{}, fmt.Errorf("%w: false positive probability (%s) must be < 1.0", ErrInvalidArgument, javamath.FormatDouble(p))
	}
	if cfg.Strategy == nil {
		return sizing{}, fmt.Errorf("%w: strategy is nil", ErrInvalidArgument)
	}
	if n == 0 {
		n = 1
	}
	logP := javamath.Log(p)
	numBits := javamath.DoubleToLong(float64(-n) * logP / ln2sq)
	var k int
	if cfg.LegacyHashCount {
		k = javaHashCount(float64(numBits) / float64(n) * ln2)
	} else {
		k = javaHashCount(-logP / ln2)
	}
	// Guava builds the bit array before the filter checks k, so an empty or
	// oversized array is reported first.
	if numBits == 0 {
		return sizing{}, fmt.Errorf("%w: could not create filter of 0 bits: the bit size must be > 0", ErrInvalidArgument)
	}
	words := (numBits-1)/64 + 1
	if words > bitarray.MaxWords {
		return sizing{}, fmt.Errorf("%w: could not create filter of %d bits: %d words is more than %d", ErrInvalidArgument, numBits, words, bitarray.MaxWords)
	}
	if k > maxHashFunctions {
		return sizing{}, fmt.Errorf("%w: could not create filter of %d bits: number of hash functions (%d) must be <= %d", ErrInvalidArgument, numBits, k, maxHashFunctions)
	}
	return sizing{words: int(words), k: k, cfg: cfg}, nil
}

// javaHashCount is Guava's Math.max(1, (int) Math.round(x)), with Java's
// rounding and its narrowing of long to int.
func javaHashCount(x float64) int {
	return max(1, int(int32(javamath.Round(x))))
}

// maxWords is the largest filter this platform can hold, in 64-bit words:
// Guava's limit, and on a 32-bit platform the most whose bytes an int can
// count.
const maxWords = min(bitarray.MaxWords, math.MaxInt/8)

// fits returns an error wrapping [ErrInvalidArgument] if the filter s sizes
// is more than this platform can hold, for New and NewRotating, which
// allocate it.
func (s sizing) fits() error {
	if s.words > maxWords {
		return fmt.Errorf("%w: could not create filter of %d bits: %d words is more than %d this platform can hold", ErrInvalidArgument, int64(s.words)*64, s.words, maxWords)
	}
	return nil
}
