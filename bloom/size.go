package bloom

import (
	"fmt"
	"math"

	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/internal/javamath"
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

// sizing is what New builds: words 64-bit words and k hash functions.
type sizing struct {
	words int
	k     int
	cfg   config
}

// Size reports the bit size and the number of hash functions New would use
// for the same arguments, or the error New would return. Size allocates
// nothing when called without options.
//
// Size is Guava's sizing on every platform. On a 32-bit platform New also
// refuses a filter of more than 2 GiB, which the address space cannot hold,
// where Size still reports the size Guava gives it, for a filter kept
// elsewhere or built by Java.
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
	cfg := configure(opts)
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
	if cfg.strategy == nil {
		return sizing{}, fmt.Errorf("%w: strategy is nil", ErrInvalidArgument)
	}
	if n == 0 {
		n = 1
	}
	logP := javamath.Log(p)
	numBits := javamath.DoubleToLong(float64(-n) * logP / ln2sq)
	var k int
	if cfg.legacyHashCount {
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
