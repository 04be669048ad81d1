// The serialized form is Guava's BloomFilter.writeTo format:
//
//	offset  size  field
//	0       1     strategy ordinal, signed (0 MURMUR128_MITZ_32, 1 MURMUR128_MITZ_64)
//	1       1     number of hash functions k, unsigned (1..255)
//	2       4     number of 64-bit words n, big-endian signed (1..2³¹−1)
//	6       8·n   the words, each big-endian; bit i is bit i&63 of word i>>6
//
// That is 6 + 8·n bytes, with no magic number, version, funnel or checksum:
// the reader must know the funnel, and a damaged word goes unnoticed.
//
// Design note: Guava's quirks stay, so that every stream one side writes the
// other reads, and every stream Guava rejects is rejected here: the ordinal
// byte is signed, trailing bytes are not read, and k = 0 is rejected only
// after the data, when Guava's constructor sees it. What does not stay is
// trusting the word count: Guava allocates what the header announces (up to
// 16 GiB for six bytes), while ReadFrom grows the filter only as words arrive.

package bloom

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/strategy"
)

const (
	// chunkWords is how many words WriteTo encodes, and ReadFrom decodes,
	// per call to the underlying writer or reader: 32 KiB.
	chunkWords = 4096
)

// WriteTo writes f to w in Guava's writeTo format, which Guava's
// BloomFilter.readFrom and [ReadFrom] read:
//
//	1 byte       strategy ordinal, signed
//	1 byte       number of hash functions, unsigned
//	4 bytes      number of 64-bit words n, big-endian
//	8·n bytes    the words, each big-endian
//
// WriteTo returns the number of bytes written, 6 + BitSize()/8 on success. It
// encodes the words in chunks of 32 KiB, so w gains nothing from a bufio
// wrapper. Puts that run concurrently with WriteTo may or may not be written.
func (f *Filter[T]) WriteTo(w io.Writer) (int64, error) {
	if err := f.usable("WriteTo"); err != nil {
		return 0, err
	}
	words := f.bits.WordCount()
	buf := f.appendHeader(make([]byte, 0, headerSize+8*min(words, chunkWords)))
	var written int64
	for i := 0; i < words; {
		end := min(i+chunkWords, words)
		buf = f.appendWords(buf, i, end)
		n, err := w.Write(buf)
		written += int64(n)
		if err != nil {
			return written, err
		}
		buf, i = buf[:0], end
	}
	return written, nil
}

// MarshalBinary returns the bytes WriteTo would write.
func (f *Filter[T]) MarshalBinary() ([]byte, error) {
	if err := f.usable("MarshalBinary"); err != nil {
		return nil, err
	}
	return f.appendBinary(make([]byte, 0, headerSize+8*f.bits.WordCount())), nil
}

// appendBinary appends the bytes WriteTo would write to b, for a usable f.
func (f *Filter[T]) appendBinary(b []byte) []byte {
	return f.appendWords(f.appendHeader(b), 0, f.bits.WordCount())
}

// usable returns an error wrapping [ErrInvalidArgument] from method for the
// zero Filter, which has nothing to write, instead of a panic in an encoder
// that met one.
func (f *Filter[T]) usable(method string) error {
	if f.bits == nil {
		return fmt.Errorf("%w: %s of a zero Filter; create it with New or ReadFrom", ErrInvalidArgument, method)
	}
	return nil
}

func (f *Filter[T]) appendHeader(b []byte) []byte {
	b = append(b, byte(int8(f.strategy.Ordinal())), byte(f.k))
	return binary.BigEndian.AppendUint32(b, uint32(f.bits.WordCount()))
}

func (f *Filter[T]) appendWords(b []byte, from, to int) []byte {
	for i := from; i < to; i++ {
		b = binary.BigEndian.AppendUint64(b, f.bits.Word(i))
	}
	return b
}

// ReadFrom reads a filter in Guava's writeTo format (see [Filter.WriteTo])
// from r, for values that f funnels. The format does not record the funnel:
// f must feed the same bytes as the funnel the filter was built with.
//
// ReadFrom reads exactly the bytes of one filter and never reads ahead, so
// bytes after it stay in r and filters can be read back to back. After the
// 6-byte header it reads the words in chunks of up to 32 KiB, so a
// bufio.Reader in front of r saves little.
//
// ReadFrom accepts exactly the streams Guava's readFrom accepts. It returns
// io.EOF if r is empty, and otherwise an error wrapping [ErrCorrupt] for a
// stream Guava would reject: an unknown strategy ordinal, a word count that is
// not positive, no hash functions, or an early end, which also wraps
// io.ErrUnexpectedEOF. Errors from r are returned wrapped. On error the
// filter is nil. On a 32-bit platform a filter of more than 2 GiB, which
// Guava accepts but the address space cannot hold, is an error wrapping
// [ErrTooLarge], returned having read only the 6-byte header.
//
// A stream cannot make ReadFrom allocate much more than it has delivered: the
// filter grows as words arrive, instead of being allocated at the size the
// header announces. To refuse large filters before reading them, use
// [ReadFromLimit].
func ReadFrom[T any](r io.Reader, f funnel.Funnel[T]) (*Filter[T], error) {
	return ReadFromLimit(r, f, bitarray.MaxWords*64)
}

// ReadFromLimit is like ReadFrom but returns an error wrapping [ErrTooLarge],
// having read only the 6-byte header, if the filter has more than maxBits
// bits. It is the counterpart of Guava's readFrom(in, funnel,
// maxAllowedSizeInBits).
func ReadFromLimit[T any](r io.Reader, f funnel.Funnel[T], maxBits int64) (*Filter[T], error) {
	if f == nil {
		return nil, fmt.Errorf("%w: funnel is nil", ErrInvalidArgument)
	}
	if maxBits < 0 {
		return nil, fmt.Errorf("%w: maximum bit size (%d) must be >= 0", ErrInvalidArgument, maxBits)
	}
	s, k, bits, err := decode(r, maxBits)
	if err != nil {
		return nil, err
	}
	return newFilter(f, s, k, bits, false), nil
}

// UnmarshalBinary replaces f with the filter in data, in Guava's writeTo
// format, as [Filter.UnmarshalText] replaces it with the decoded text: f
// keeps its funnel, and a zero Filter takes the default funnel of T. Unlike
// ReadFrom, UnmarshalBinary rejects bytes after the filter, since data
// should hold exactly one. On error f is unchanged. UnmarshalBinary must not
// run concurrently with any other method of f.
func (f *Filter[T]) UnmarshalBinary(data []byte) error {
	fn, err := funnelOrDefault(f.funnel, "Filter", "New or ReadFrom")
	if err != nil {
		return err
	}
	r := &byteReader{data: data}
	s, k, bits, err := decode(r, bitarray.MaxWords*64)
	if err != nil {
		return err
	}
	if rest := len(data) - r.off; rest > 0 {
		return fmt.Errorf("%w: %d bytes after the %d-byte filter", ErrCorrupt, rest, r.off)
	}
	*f = *newFilter(fn, s, k, bits, false)
	return nil
}

// byteReader is a bytes.Reader that tells how far it has read.
type byteReader struct {
	data []byte
	off  int
}

func (r *byteReader) Read(p []byte) (int, error) {
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	n := copy(p, r.data[r.off:])
	r.off += n
	return n, nil
}

// decode reads one serialized filter from r, checking it as Guava's readFrom
// does and in the same order.
func decode(r io.Reader, maxBits int64) (strategy.Strategy, int, *bitarray.Array, error) {
	var hdr [headerSize]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.EOF {
			return nil, 0, nil, io.EOF
		}
		return nil, 0, nil, readError(err, n, headerSize)
	}
	h, err := parseHeader(hdr)
	if err != nil {
		return nil, 0, nil, err
	}
	if h.words > maxWords {
		// Only where int cannot count 2³¹−1 words, on 32-bit platforms.
		return nil, 0, nil, fmt.Errorf("%w: %d words is more than %d this platform can hold (%s)", ErrTooLarge, h.words, maxWords, h.guava())
	}
	if h.words*64 > maxBits {
		return nil, 0, nil, fmt.Errorf("%w: %d bits is more than the limit of %d (%s)", ErrTooLarge, h.words*64, maxBits, h.guava())
	}

	data, err := readWords(r, int(h.words))
	if err != nil {
		return nil, 0, nil, err
	}
	if h.k == 0 {
		return nil, 0, nil, fmt.Errorf("%w: number of hash functions (0) must be > 0 (%s)", ErrCorrupt, h.guava())
	}
	return h.strategy, h.k, bitarray.FromWords(data), nil
}

// readWords reads n big-endian words, growing the result as they arrive so
// that a header announcing more words than the stream holds costs no more
// memory than twice the bytes that did arrive. It doubles the result's
// capacity, up to n, rather than leave it to append, which grows large
// slices by a quarter: reading a filter of N bytes then allocates at most
// 2N in all, and holds at most 1.5N at once (N/2 copied into N).
func readWords(r io.Reader, n int) ([]uint64, error) {
	words := make([]uint64, 0, min(n, chunkWords))
	buf := make([]byte, 8*min(n, chunkWords))
	for len(words) < n {
		if len(words) == cap(words) {
			words = append(make([]uint64, 0, min(n, 2*cap(words))), words...)
		}
		chunk := buf[:8*min(n-len(words), chunkWords)]
		if got, err := io.ReadFull(r, chunk); err != nil {
			return nil, readError(err, headerSize+8*len(words)+got, headerSize+8*n)
		}
		for i := 0; i < len(chunk); i += 8 {
			words = append(words, binary.BigEndian.Uint64(chunk[i:]))
		}
	}
	return words, nil
}

// readError describes a failed read after got of the want bytes of a
// filter.
func readError(err error, got, want int) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: stream ends after %d of %d bytes: %w", ErrCorrupt, got, want, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("bloom: reading filter after %d bytes: %w", got, err)
}

// A shape is what makes filters alike: their bit size, number of hash
// functions and strategy, which a Rotating's generations share, and a
// Scalable's stages follow from its sizing.
type shape struct {
	bits     int64
	k        int
	strategy strategy.Strategy
}

func shapeOf[T any](f *Filter[T]) shape { return shape{f.BitSize(), f.k, f.strategy} }

func (s shape) String() string {
	if s.strategy == nil {
		return fmt.Sprintf("%d bits and %d hash functions", s.bits, s.k)
	}
	return fmt.Sprintf("%d bits and %d hash functions, %v", s.bits, s.k, s.strategy)
}

// readPart reads one filter of the several that a Rotating or a Scalable
// writes back to back, refusing, after its header alone, one of more than
// maxBits bits, so that a stream cannot make its reader allocate more than
// what it expects: the error is then the one tooLarge makes of
// ReadFromLimit's.
func readPart[T any](rd io.Reader, fn funnel.Funnel[T], maxBits int64, tooLarge func(error) error) (*Filter[T], error) {
	f, err := ReadFromLimit(rd, fn, maxBits)
	if errors.Is(err, ErrTooLarge) {
		return nil, tooLarge(err)
	}
	return f, err
}

// formatFloat formats a false-positive probability as Go code would write
// it, for errors that name an option's arguments.
func formatFloat(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) }
