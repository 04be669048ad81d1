package bloom

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/mitzbloom/mitzbloom/strategy"
)

// headerSize is the size in bytes of the header that begins a filter in
// Guava's writeTo format, before its words: the strategy's ordinal, the
// number of hash functions and the number of words (see [Filter.WriteTo]).
const headerSize = 6

// A header is what the header of a filter in Guava's writeTo format
// declares.
type header struct {
	strategy strategy.Strategy
	// k is the number of hash functions, 0 to 255: a stream that declares
	// 0 is rejected only after its words, as Guava rejects it.
	k int
	// words is the number of 64-bit words after the header, at least 1.
	words int64
}

// parseHeaderPrefix decodes the header at the start of b, with the checks
// ReadFrom makes of a header, for raw.ParseHeader. Unlike ReadFrom, it
// accepts a filter too large for this platform's memory, so that the
// caller learns its size. The ordinal, b's first byte, is checked even in a
// b too short for a header, so that bytes which cannot begin a filter are
// told apart from a filter cut short.
func parseHeaderPrefix(b []byte) (header, error) {
	if len(b) < headerSize {
		if len(b) > 0 {
			if _, err := strategy.ByOrdinal(int(int8(b[0]))); err != nil {
				return header{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
		}
		return header{}, readError(io.ErrUnexpectedEOF, len(b), headerSize)
	}
	return parseHeader([headerSize]byte(b))
}

// parseHeader decodes hdr, checking it as Guava's readFrom does and in the
// same order.
func parseHeader(hdr [headerSize]byte) (header, error) {
	ordinal := int(int8(hdr[0]))
	k := int(hdr[1])
	words := int64(int32(binary.BigEndian.Uint32(hdr[2:])))
	guava := guavaMessage(ordinal, k, words)

	s, err := strategy.ByOrdinal(ordinal)
	if err != nil {
		return header{}, fmt.Errorf("%w: %w (%s)", ErrCorrupt, err, guava)
	}
	if words <= 0 {
		return header{}, fmt.Errorf("%w: word count %d must be > 0 (%s)", ErrCorrupt, words, guava)
	}
	return header{strategy: s, k: k, words: words}, nil
}

// guavaMessage returns Guava's exception message for a rejected header, for
// those who compare notes with Java.
func guavaMessage(ordinal, k int, words int64) string {
	return fmt.Sprintf("strategyOrdinal: %d numHashFunctions: %d dataLength: %d", ordinal, k, words)
}

// guava returns Guava's exception message for a stream of header h that is
// rejected after its header was read.
func (h header) guava() string {
	return guavaMessage(h.strategy.Ordinal(), h.k, h.words)
}
