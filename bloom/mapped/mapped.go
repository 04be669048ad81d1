// Package mapped opens a Bloom filter file in Guava's writeTo format in
// place, read-only: it maps the file into memory and answers lookups,
// statistics and WriteTo from the file's bytes, without reading or copying
// them first.
//
// Opening a file of any size takes as long as a few system calls, and the
// filter takes no memory of the process's own: the lookups map in the pages
// they read from the kernel's page cache, which every process that opens
// the same file shares, so a fleet of processes on one host holds one copy
// of the filter, and a process that starts needs no time to load it. The
// pages mapped in count in the process's resident set as shared file
// pages, a folio of the page cache at a time (4 KiB, or up to 2 MiB where
// the file system keeps large folios), and only the statistics and WriteTo
// read them all. Use
// it for large filters that another program builds (Guava's writeTo, or
// [bloom.Filter.WriteTo]) and that are only looked up; use
// [bloom.ReadFrom] for a filter to add values to.
//
//	f, err := mapped.Open("users.bloom", funnel.Int64)
//	if err != nil {
//		return err
//	}
//	defer f.Close()
//	if f.MightContain(id) {
//		…
//	}
//
// A [Filter] has no Put: a file opened in place is read-only, and the
// compiler says so.
//
// # The file under the mapping
//
// A mapping shows the file as it is: nothing may change a file while a
// Filter has it open. Replace a filter file by writing the new one under
// another name and renaming it over the old one (os.Rename): a Filter that
// has the old file open goes on answering from it until it is closed, and
// opening the name again opens the new one. Writing into the file in place
// makes the lookups see bits change under them. Truncating it is worse:
// the next lookup that reads a page past the file's new end gets SIGBUS
// from the kernel, which crashes the program (Go turns it into a panic
// only in a goroutine that has called debug.SetPanicOnFault(true)). The
// same holds for a file on a network file system that another host
// changes.
//
// # Platforms
//
// Open maps the file on Linux, macOS and the BSDs, including on 32-bit
// platforms, where a file larger than 2 GiB is refused with an error
// wrapping [bloom.ErrTooLarge], as [bloom.ReadFrom] refuses it. Elsewhere,
// as on Windows, Open reads the file into memory, as bloom.ReadFrom would,
// and the Filter answers from that copy; it behaves the same otherwise.
package mapped

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/internal/hashing"
	"github.com/mitzbloom/mitzbloom/bloom/internal/link"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/internal/estimate"
	"github.com/mitzbloom/mitzbloom/internal/probe"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// headerSize is the size of the header before a filter's words (see
// [bloom.Filter.WriteTo]).
const headerSize = 6

// A Filter is a Bloom filter of values of type T in a file opened in place
// by [Open]: the filter [bloom.ReadFrom] would read from the file, which
// answers MightContain as that filter would, without a copy of the file's
// bytes. It has no Put: it is read-only. The zero Filter is not usable.
//
// A Filter is safe for concurrent use by multiple goroutines, except Close,
// which must not run while any other method does. After Close, the lookups
// and statistics panic, and WriteTo returns an error: the bytes they read
// are no longer mapped.
type Filter[T any] struct {
	bits     *bitarray.Encoded // nil once closed
	probe    probe.Prober
	k        int
	strategy strategy.Strategy
	bitSize  int64
	funnel   funnel.Funnel[T]
	hash     hashing.Hasher[T]

	file    *file
	cleanup runtime.Cleanup
}

// A file is the bytes of an opened filter file, mapped or read.
type file struct {
	data    []byte
	release func([]byte) error // munmap, or nil for bytes read into memory
}

func (m *file) close() error {
	if m.release == nil {
		return nil
	}
	return m.release(m.data)
}

// Open opens the named file, which must hold exactly one filter in Guava's
// writeTo format, for values that f funnels, and returns the filter it
// holds: the filter [bloom.ReadFrom] would read from it. The format does not
// record the funnel: f must feed the same bytes as the funnel the filter
// was built with. Open maps the file (see the package documentation) and
// reads only its header, in the first page; it does not keep the file
// open.
//
// Open refuses a file that bloom.ReadFrom would refuse, with the same error
// wrapping [bloom.ErrCorrupt] (and io.ErrUnexpectedEOF for a file that ends
// early, or is empty), or [bloom.ErrTooLarge] for one too large for this
// platform, and also, as [bloom.Filter.UnmarshalBinary] does, a file with
// bytes after its filter, such as the several filters that
// [bloom.Rotating.WriteTo] and [bloom.Scalable.WriteTo] write. Errors are
// of type *fs.PathError.
//
// The Filter must be closed with Close once it is no longer used. If it
// becomes unreachable first, the garbage collector releases the mapping,
// as it closes an unreachable os.File.
func Open[T any](name string, f funnel.Funnel[T]) (*Filter[T], error) {
	if f == nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: funnel is nil", bloom.ErrInvalidArgument)}
	}
	m, err := openFile(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	s, k, words, err := link.CheckEncoded(m.data)
	if err != nil {
		if err == io.EOF {
			err = fmt.Errorf("%w: empty file: %w", bloom.ErrCorrupt, io.ErrUnexpectedEOF)
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.Join(err, m.close())}
	}
	filter := &Filter[T]{
		bits:     bitarray.NewEncoded(m.data[headerSize : headerSize+8*words]),
		probe:    probe.For(s == strategy.Murmur128Mitz32, false),
		k:        k,
		strategy: s,
		bitSize:  words * 64,
		funnel:   f,
		hash:     hashing.For(f),
		file:     m,
	}
	filter.cleanup = runtime.AddCleanup(filter, func(m *file) { _ = m.close() }, m)
	return filter, nil
}

// openFile maps, or reads, the named file, which must be a regular file
// of at most math.MaxInt bytes.
func openFile(name string) (*file, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: not a regular file (%v)", bloom.ErrInvalidArgument, fi.Mode().Type())
	}
	size := fi.Size()
	if size == 0 {
		return &file{}, nil
	}
	if size > int64(^uint(0)>>1) {
		return nil, fmt.Errorf("%w: %d bytes is more than this platform can map", bloom.ErrTooLarge, size)
	}
	return mapFile(f, int(size))
}

// Close releases the file's bytes: it unmaps them, or lets the garbage
// collector have them where they were read. Calling Close again does
// nothing and returns nil. Close must not run concurrently with any other
// method of f, and f must not be used afterwards except for BitSize,
// NumHashFunctions and String.
func (f *Filter[T]) Close() error {
	if f.bits == nil {
		return nil
	}
	f.bits = nil
	f.cleanup.Stop()
	return f.file.close()
}

// closed panics for method of a closed Filter.
func closed(method string) {
	panic("mapped: " + method + " of a closed Filter")
}

// MightContain reports whether v might have been put in the filter; false
// means it certainly was not. It answers as bloom.ReadFrom's filter of the
// same file would. With the built-in funnels, it does not allocate.
func (f *Filter[T]) MightContain(v T) bool {
	bits := f.bits
	if bits == nil {
		closed("MightContain")
	}
	h1, h2 := f.hash.Sum128(v)
	ok := f.probe.MightContainEncoded(h1, h2, f.k, bits)
	runtime.KeepAlive(f) // the mapping stays until the lookup is done
	return ok
}

// MightContainMany appends to dst, for each value of vs in order, what
// MightContain would report for it, and returns the extended slice. As
// [bloom.Filter.MightContainMany] does, it overlaps the memory reads of
// many values, and with the built-in funnels it allocates only to grow
// dst, never when dst has room for len(vs) more answers.
func (f *Filter[T]) MightContainMany(dst []bool, vs []T) []bool {
	bits := f.bits
	if bits == nil {
		closed("MightContainMany")
	}
	dst = slices.Grow(dst, len(vs))
	var hs [probe.BatchSize]probe.Hash
	for len(vs) > 0 {
		n := min(len(vs), len(hs))
		for i := range hs[:n] {
			hs[i].H1, hs[i].H2 = f.hash.Sum128(vs[i])
		}
		f.probe.MightContainManyEncoded(hs[:n], f.k, bits, dst[len(dst):len(dst)+n])
		dst = dst[:len(dst)+n]
		vs = vs[n:]
	}
	runtime.KeepAlive(f)
	return dst
}

// BitSize returns the number of bits in the filter, a multiple of 64: the
// file holds BitSize()/8 bytes after its 6-byte header.
func (f *Filter[T]) BitSize() int64 { return f.bitSize }

// NumHashFunctions returns k, the number of bits each value sets.
func (f *Filter[T]) NumHashFunctions() int { return f.k }

// BitCount returns the number of bits set in the filter. It reads every
// page of the file, which the kernel maps in as it goes: after it, the
// whole file counts in the process's resident memory, as the page cache
// it shares with other processes.
func (f *Filter[T]) BitCount() int64 {
	bits := f.bits
	if bits == nil {
		closed("BitCount")
	}
	n := bits.Count()
	runtime.KeepAlive(f)
	return n
}

// ExpectedFPP returns the probability that MightContain returns true for a
// value that was never put, estimated from the fraction of bits set as
// [bloom.Filter.ExpectedFPP] estimates it. It reads every page of the file,
// as BitCount does.
func (f *Filter[T]) ExpectedFPP() float64 {
	return estimate.FPP(f.BitCount(), f.bitSize, f.k)
}

// ApproximateElementCount estimates the number of distinct values put in
// the filter from the fraction of bits set, as
// [bloom.Filter.ApproximateElementCount] does. It reads every page of the
// file, as BitCount does.
func (f *Filter[T]) ApproximateElementCount() int64 {
	return estimate.Count(f.BitCount(), f.bitSize, f.k)
}

// writeChunk is how many bytes WriteTo hands its writer at a time, so that
// a writer that copies them (a bytes.Buffer, say) never copies so many in
// one call that the garbage collector waits long for it.
const writeChunk = 1 << 20

// WriteTo writes the filter to w in Guava's writeTo format, as
// [bloom.Filter.WriteTo] would write the filter that bloom.ReadFrom reads
// from the file: the file's own bytes, handed to w in chunks of 1 MiB
// straight from the mapping. It returns the number of bytes written, 6 +
// BitSize()/8 on success.
func (f *Filter[T]) WriteTo(w io.Writer) (int64, error) {
	if f.bits == nil {
		return 0, fmt.Errorf("%w: WriteTo of a closed Filter: %w", bloom.ErrInvalidArgument, os.ErrClosed)
	}
	data := f.file.data
	var written int64
	var err error
	for len(data) > 0 && err == nil {
		chunk := data[:min(len(data), writeChunk)]
		var n int
		n, err = w.Write(chunk)
		written += int64(n)
		if err == nil && n < len(chunk) {
			err = io.ErrShortWrite
		}
		data = data[len(chunk):]
	}
	runtime.KeepAlive(f)
	return written, err
}

// String returns a short description of f, as [bloom.Filter.String] does,
// such as "mapped.Filter{funnel.Int64 MURMUR128_MITZ_64 9600 bits, 7 hash
// functions}".
func (f *Filter[T]) String() string {
	return fmt.Sprintf("mapped.Filter{%s %v %d bits, %d hash functions}", link.FunnelName(f.funnel), f.strategy, f.bitSize, f.k)
}
