package bloom

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/mitzbloom/mitzbloom/strategy"
)

// HeaderSize is the size in bytes of the header that begins a filter in
// Guava's writeTo format, before its words: the strategy's ordinal, the
// number of hash functions and the number of words (see [Filter.WriteTo]).
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
// included: HeaderSize + 8·Words, which [Filter.WriteTo] writes and
// [ReadFrom] reads.
func (h Header) Size() int64 { return HeaderSize + 8*h.Words }

// ParseHeader decodes the header at the start of b, the first bytes of a
// filter in Guava's writeTo format, with the checks [ReadFrom] makes of a
// header, so that a caller can learn a filter's size before reading it (to
// refuse it, say, having read only its header). It reads at most HeaderSize
// bytes of b.
//
// It returns an error wrapping [ErrCorrupt] for an unknown strategy ordinal
// (also wrapping [strategy.ErrUnknownOrdinal]), a word count that is not
// positive, or b shorter than HeaderSize (also wrapping
// io.ErrUnexpectedEOF): the ordinal, b's first byte, is checked even in a
// short b, so that bytes which cannot begin a filter are told apart from a
// filter cut short. Unlike ReadFrom, it accepts a filter too large for this
// platform's memory (more than 2 GiB on a 32-bit platform), so that the
// caller learns its size.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		if len(b) > 0 {
			if _, err := strategy.ByOrdinal(int(int8(b[0]))); err != nil {
				return Header{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
		}
		return Header{}, readError(io.ErrUnexpectedEOF, len(b), HeaderSize)
	}
	return parseHeader([HeaderSize]byte(b))
}

// parseHeader decodes hdr, checking it as Guava's readFrom does and in the
// same order.
func parseHeader(hdr [HeaderSize]byte) (Header, error) {
	ordinal := int(int8(hdr[0]))
	k := int(hdr[1])
	words := int64(int32(binary.BigEndian.Uint32(hdr[2:])))
	guava := guavaMessage(ordinal, k, words)

	s, err := strategy.ByOrdinal(ordinal)
	if err != nil {
		return Header{}, fmt.Errorf("%w: %w (%s)", ErrCorrupt, err, guava)
	}
	if words <= 0 {
		return Header{}, fmt.Errorf("%w: word count %d must be > 0 (%s)", ErrCorrupt, words, guava)
	}
	return Header{Strategy: s, NumHashFunctions: k, Words: words}, nil
}

// guavaMessage returns Guava's exception message for a rejected header, for
// those who compare notes with Java.
func guavaMessage(ordinal, k int, words int64) string {
	return fmt.Sprintf("strategyOrdinal: %d numHashFunctions: %d dataLength: %d", ordinal, k, words)
}

// guava returns Guava's exception message for a stream of header h that is
// rejected after its header was read.
func (h Header) guava() string {
	return guavaMessage(h.Strategy.Ordinal(), h.NumHashFunctions, h.Words)
}
