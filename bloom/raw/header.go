package raw

import (
	"github.com/mitzbloom/mitzbloom/bloom/internal/link"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// HeaderSize is the size in bytes of the header that begins a filter in
// Guava's writeTo format, before its words: the strategy's ordinal, the
// number of hash functions and the number of words (see
// [bloom.Filter.WriteTo]).
const HeaderSize = 6

// A Header is what the header of a filter in Guava's writeTo format
// declares. The zero Header declares nothing; get one from [ParseHeader].
type Header struct {
	// Strategy is the strategy the filter's ordinal names.
	Strategy strategy.Strategy
	// NumHashFunctions is the number of hash functions, 0 to 255: a
	// stream that declares 0 is rejected only after its words, as Guava
	// rejects it.
	NumHashFunctions int
	// Words is the number of 64-bit words after the header, at least 1.
	Words int64
}

// Size returns the size in bytes of the filter h declares, its header
// included: HeaderSize + 8·Words, which [bloom.Filter.WriteTo] writes and
// [bloom.ReadFrom] reads.
func (h Header) Size() int64 { return HeaderSize + 8*h.Words }

// ParseHeader decodes the header at the start of b, the first bytes of a
// filter in Guava's writeTo format, with the checks [bloom.ReadFrom] makes of
// a header, so that a caller can learn a filter's size before reading it (to
// refuse it, say, having read only its header). It reads at most HeaderSize
// bytes of b.
//
// It returns an error wrapping [bloom.ErrCorrupt] for an unknown strategy
// ordinal (also wrapping [strategy.ErrUnknownOrdinal]), a word count that is
// not positive, or b shorter than HeaderSize (also wrapping
// io.ErrUnexpectedEOF): the ordinal, b's first byte, is checked even in a
// short b, so that bytes which cannot begin a filter are told apart from a
// filter cut short. Unlike [bloom.ReadFrom], it accepts a filter too large for
// this platform's memory (more than 2 GiB on a 32-bit platform), so that the
// caller learns its size.
func ParseHeader(b []byte) (Header, error) {
	s, k, words, err := link.ParseHeader(b)
	if err != nil {
		return Header{}, err
	}
	return Header{Strategy: s, NumHashFunctions: k, Words: words}, nil
}
