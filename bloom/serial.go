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
// 16 GiB for six bytes), while ReadFrom allocates the filter only once its
// reader holds, or has delivered, enough of it (see readWords).

package bloom

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// writeChunk is how many bytes WriteTo encodes per call to its writer:
// small enough to stay in a core's L2 cache while it is written, large
// enough that the calls cost little beside the copying.
const writeChunk = 256 << 10

// WriteTo writes f to w in Guava's writeTo format, which Guava's
// BloomFilter.readFrom and [ReadFrom] read:
//
//	1 byte       strategy ordinal, signed
//	1 byte       number of hash functions, unsigned
//	4 bytes      number of 64-bit words n, big-endian
//	8·n bytes    the words, each big-endian
//
// WriteTo returns the number of bytes written, 6 + BitSize()/8 on success. It
// encodes the words in chunks of 256 KiB, so w gains nothing from a bufio
// wrapper, and it allocates one such chunk (less for a smaller filter).
// Puts that run concurrently with WriteTo may or may not be written.
func (f *Filter[T]) WriteTo(w io.Writer) (int64, error) {
	if err := f.usable("WriteTo"); err != nil {
		return 0, err
	}
	words := f.bits.WordCount()
	chunk := min(words, writeChunk/8)
	buf := make([]byte, headerSize+8*chunk)
	f.putHeader(buf)
	head := headerSize // the header goes out with the first chunk
	var written int64
	for i := 0; i < words; i += chunk {
		m := min(chunk, words-i)
		f.bits.Encode(buf[head:head+8*m], i)
		n, err := w.Write(buf[:head+8*m])
		written += int64(n)
		if err != nil {
			return written, err
		}
		head = 0
	}
	return written, nil
}

// MarshalBinary returns the bytes WriteTo would write. A filter of 32 MiB
// or more is encoded by up to GOMAXPROCS goroutines at once, since the first
// writes to the new memory are most of the time it takes.
func (f *Filter[T]) MarshalBinary() ([]byte, error) {
	if err := f.usable("MarshalBinary"); err != nil {
		return nil, err
	}
	b := make([]byte, f.encodedSize())
	f.encode(b)
	return b, nil
}

// encodedSize returns the size of f in Guava's format, which WriteTo
// writes.
func (f *Filter[T]) encodedSize() int { return headerSize + 8*f.bits.WordCount() }

// encode writes to b, which holds at least f.encodedSize() bytes, the bytes
// WriteTo would write, for a usable f, and returns what follows them in b.
func (f *Filter[T]) encode(b []byte) []byte {
	f.putHeader(b)
	n := f.encodedSize()
	f.bits.Encode(b[headerSize:n], 0)
	return b[n:]
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

// putHeader writes f's header to the first headerSize bytes of b.
func (f *Filter[T]) putHeader(b []byte) {
	b[0], b[1] = byte(int8(f.strategy.Ordinal())), byte(f.k)
	binary.BigEndian.PutUint32(b[2:headerSize], uint32(f.bits.WordCount()))
}

// ReadFrom reads a filter in Guava's writeTo format (see [Filter.WriteTo])
// from r, for values that f funnels. The format does not record the funnel:
// f must feed the same bytes as the funnel the filter was built with.
//
// ReadFrom reads exactly the bytes of one filter and never reads ahead, so
// bytes after it stay in r and filters can be read back to back. After the
// 6-byte header it reads the words in chunks of 256 KiB straight into the
// filter's memory, so a bufio.Reader in front of r saves nothing, and hides
// the size of a file (see below).
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
// A stream cannot make ReadFrom allocate much more than it has delivered:
// the words that arrive are read into parts, each as large as those before
// it, and the filter is allocated at the size the header announces only
// once half of it has arrived, so a header that announces more than the
// stream holds costs at most a few times the bytes that did arrive. A
// reader that tells how many bytes it has left, and has enough, is read
// straight into a filter allocated at once: *os.File of a regular file (by
// its size and offset), and *bytes.Reader, *bytes.Buffer, *strings.Reader
// or any reader with a Len method. Reading a file so takes about as long
// as os.ReadFile of it; a stream of unknown size, half as long again.
// ReadFrom copies nothing in one piece larger than a chunk, so the garbage
// collector never waits long for it. To refuse large filters before
// reading them, use [ReadFromLimit].
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
	if err := trailing(len(data)-r.off, r.off); err != nil {
		return err
	}
	*f = *newFilter(fn, s, k, bits, false)
	return nil
}

// byteReader is a bytes.Reader that tells how far it has read, and whose
// words are decoded from its bytes in one pass, without a copy between.
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

// readWords is readWords for the bytes of r: it decodes n words from
// them, having checked that they are there, into words allocated once.
func (r *byteReader) readWords(n int) ([]uint64, error) {
	rest := r.data[r.off:]
	if len(rest) < 8*n {
		r.off = len(r.data)
		return nil, readError(io.ErrUnexpectedEOF, headerSize+len(rest), headerSize+8*n)
	}
	words := bitarray.MakeWords(n)
	bitarray.DecodeWords(words, rest)
	r.off += 8 * n
	return words, nil
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
	if err == nil {
		err = h.checkSize(maxBits)
	}
	if err != nil {
		return nil, 0, nil, err
	}
	data, err := readWords(r, int(h.words))
	if err != nil {
		return nil, 0, nil, err
	}
	if err := h.checkHashCount(); err != nil {
		return nil, 0, nil, err
	}
	return h.strategy, h.k, bitarray.FromWords(data), nil
}

// checkSize returns an error wrapping ErrTooLarge if the filter h declares
// has more than maxBits bits or more words than this platform can hold.
func (h header) checkSize(maxBits int64) error {
	if h.words > maxWords {
		// Only where int cannot count 2³¹−1 words, on 32-bit platforms.
		return fmt.Errorf("%w: %d words is more than %d this platform can hold (%s)", ErrTooLarge, h.words, maxWords, h.guava())
	}
	if h.words*64 > maxBits {
		return fmt.Errorf("%w: %d bits is more than the limit of %d (%s)", ErrTooLarge, h.words*64, maxBits, h.guava())
	}
	return nil
}

// checkHashCount returns the error for a filter of no hash functions, which
// Guava's constructor rejects once the words have been read.
func (h header) checkHashCount() error {
	if h.k == 0 {
		return fmt.Errorf("%w: number of hash functions (0) must be > 0 (%s)", ErrCorrupt, h.guava())
	}
	return nil
}

// checkEncoded checks that b holds exactly one filter in Guava's writeTo
// format, as UnmarshalBinary checks its data, in the same order and with
// the same errors, without decoding the words, and returns its header: for
// package mapped, which answers from such bytes in place.
func checkEncoded(b []byte) (header, error) {
	if len(b) == 0 {
		return header{}, io.EOF
	}
	if len(b) < headerSize {
		return header{}, readError(io.ErrUnexpectedEOF, len(b), headerSize)
	}
	h, err := parseHeader([headerSize]byte(b))
	if err == nil {
		err = h.checkSize(bitarray.MaxWords * 64)
	}
	if err != nil {
		return header{}, err
	}
	size := headerSize + 8*int(h.words)
	if len(b) < size {
		return header{}, readError(io.ErrUnexpectedEOF, len(b), size)
	}
	if err := h.checkHashCount(); err != nil {
		return header{}, err
	}
	return h, trailing(len(b)-size, size)
}

// trailing returns the error for rest bytes after a filter of size bytes
// in data that should hold exactly one, or nil if there are none.
func trailing(rest, size int) error {
	if rest > 0 {
		return fmt.Errorf("%w: %d bytes after the %d-byte filter", ErrCorrupt, rest, size)
	}
	return nil
}

// readChunk is how many bytes ReadFrom asks its reader for at a time. The
// words of a chunk are turned from big-endian while the chunk is still in
// the core's L2 cache, and no single copy a read makes is long enough to
// keep the garbage collector waiting for the goroutine to stop: a copy is
// one call that cannot be preempted, and one of hundreds of megabytes took
// a second or more to stop a filter's reader for.
const readChunk = 256 << 10

// readWords reads n words, 8 bytes each, big-endian, straight into the
// words that will hold them, a chunk at a time.
//
// Where r tells how many bytes it has left (see remaining) and they are
// enough, the words are allocated once, at their full size. Otherwise the
// stream is read into parts, each as large as all those before it, until
// they hold half of the words (at once, for a filter of up to two chunks);
// only then are the words allocated, the parts copied in, a chunk at a
// time, and the rest read straight into them. A header that announces more
// words than the stream holds thus costs no more memory than twice the
// bytes that did arrive, and reading a filter of N bytes allocates 1.5N in
// all, holds as much at most, and copies N/2 of them once.
func readWords(r io.Reader, n int) ([]uint64, error) {
	if br, ok := r.(*byteReader); ok {
		return br.readWords(n)
	}
	const chunkWords = readChunk / 8
	var parts [][]uint64
	have := 0 // words in parts
	if rem, ok := remaining(r); !ok || rem < 8*int64(n) {
		for half := (n + 1) / 2; n > 2*chunkWords && have < half; {
			part := bitarray.MakeWords(min(max(have, chunkWords), half-have))
			if got, err := readInto(r, part); err != nil {
				return nil, readError(err, headerSize+8*have+got, headerSize+8*n)
			}
			parts = append(parts, part)
			have += len(part)
		}
	}
	words := bitarray.MakeWords(n)
	at := 0
	for _, part := range parts {
		bitarray.CopyWords(words[at:], part)
		at += len(part)
	}
	if got, err := readInto(r, words[have:]); err != nil {
		return nil, readError(err, headerSize+8*have+got, headerSize+8*n)
	}
	return words, nil
}

// readInto fills words, new memory, from r, reading each chunk's bytes into
// the words' own memory, populated first (see bitarray.Populate), and then
// turning them into words. It returns how many bytes it read before an
// error.
func readInto(r io.Reader, words []uint64) (int, error) {
	b := bitarray.WordBytes(words)
	for off := 0; off < len(b); off += readChunk {
		chunk := b[off:min(off+readChunk, len(b))]
		// A reader that copies into the chunk, as a bytes.Reader does,
		// would fault its pages in as it writes them.
		bitarray.Populate(words[off/8 : off/8+len(chunk)/8])
		if got, err := io.ReadFull(r, chunk); err != nil {
			return off + got, err
		}
		bitarray.FromBigEndian(words[off/8 : off/8+len(chunk)/8])
	}
	return len(b), nil
}

// remaining returns how many bytes r has left to read, when r can tell:
// *bytes.Reader, *bytes.Buffer and *strings.Reader by their Len method,
// and a regular file (*os.File) by its size and offset. A reader that tells
// has delivered nothing yet, but it holds its bytes already, so ReadFrom
// may allocate what they encode at once.
func remaining(r io.Reader) (int64, bool) {
	switch r := r.(type) {
	case interface{ Len() int }:
		return int64(r.Len()), true
	case interface {
		Stat() (fs.FileInfo, error)
		io.Seeker
	}:
		fi, err := r.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return 0, false
		}
		off, err := r.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false
		}
		return fi.Size() - off, true
	}
	return 0, false
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
