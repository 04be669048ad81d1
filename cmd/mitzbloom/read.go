package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/mapped"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
)

var (
	// errNotFilter reports a file that is neither one filter, nor the two
	// generations of a Rotating, nor the stages of a Scalable.
	errNotFilter = errors.New("not a filter, a Rotating snapshot or a Scalable")
	// errNoOrdinal reports bytes that cannot begin a filter, whose first
	// byte is its strategy's ordinal.
	errNoOrdinal = errors.New("a filter begins with its strategy's ordinal, byte 0 or 1")
)

// An input is a filter file opened for reading: a regular file, read where
// it lies, or standard input (or a pipe, or a device), whose bytes are read
// into memory first so that its headers can be read before its filters.
type input struct {
	name string // as given: a path, or "-"
	at   io.ReaderAt
	size int64
	// file is the open file of a regular file, and data the bytes read
	// into memory otherwise.
	file *os.File
	data []byte
}

// open opens an input: a file, or standard input for "-".
func (e *env) open(name string) (io.Reader, func(), error) {
	if name == "-" {
		return e.stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	// A directory opens, and fails only when read, with a less plain
	// message.
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: is a directory", name)
	}
	return f, func() { f.Close() }, nil
}

// openInput opens the input name ("-": standard input) for its filters. Of
// anything but a regular file it reads at most maxBytes, and the header
// that may begin there, when maxBytes > 0: enough to refuse, by their
// headers, filters that take more.
func (e *env) openInput(name string, maxBytes int64) (*input, error) {
	r, closeInput, err := e.open(name)
	if err != nil {
		return nil, err
	}
	if f, ok := r.(*os.File); ok && name != "-" {
		fi, err := f.Stat()
		if err != nil {
			closeInput()
			return nil, err
		}
		if fi.Mode().IsRegular() {
			return &input{name: name, at: f, size: fi.Size(), file: f}, nil
		}
	}
	defer closeInput()
	if maxBytes > 0 {
		r = io.LimitReader(r, maxBytes+raw.HeaderSize)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", displayName(name), err)
	}
	return &input{name: name, at: bytes.NewReader(b), size: int64(len(b)), data: b}, nil
}

// close closes the input's file, if it has one.
func (in *input) close() {
	if in.file != nil {
		in.file.Close()
	}
}

// reader returns a reader of the input from its start, which tells the
// library's readers its size, so that they allocate each filter once: the
// file itself, which headerAt reads without moving its offset, or a
// bytes.Reader.
func (in *input) reader() io.Reader {
	if in.file != nil {
		return in.file
	}
	return bytes.NewReader(in.data)
}

// displayName is how errors name an input.
func displayName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}

// A fileKind is what a filter file holds.
type fileKind int

const (
	// oneFilter is one filter, as Filter.WriteTo and Guava's writeTo write.
	oneFilter fileKind = iota
	// rotatingSnapshot is the two generations of a Rotating, current
	// first, as Rotating.WriteTo writes them: two filters of one shape.
	rotatingSnapshot
	// scalableStages is the stages of a Scalable, oldest first, as
	// Scalable.WriteTo writes them: filters of one strategy, each larger
	// than the one before.
	scalableStages
)

// A layout is what a file holds, told by its filters' headers alone: its
// kind and the headers of its filters.
type layout struct {
	kind  fileKind
	parts []raw.Header
}

// readLayout reads the headers of in's filters and tells its kind, with the
// error that says what is wrong for a file that is none of them. With
// maxBytes > 0 it refuses, by the headers alone, a file whose filters take
// more than maxBytes bytes. It leaves what only reading a filter tells (a
// filter cut short, one with no hash functions) to the library's readers,
// which read them next.
func readLayout(in *input, maxBytes int64) (layout, error) {
	over := func(size int64) bool { return maxBytes > 0 && size > maxBytes }
	if in.size == 0 {
		return layout{}, errors.New("empty, not a Guava filter file")
	}
	first, err := headerAt(in, 0)
	switch {
	case errors.Is(err, errNoOrdinal):
		return layout{}, fmt.Errorf("not a Guava filter file: %w", err)
	case err != nil:
		return layout{}, err
	case over(first.Size()):
		return layout{}, fmt.Errorf("a filter of %d bytes, more than -max-bytes %d", first.Size(), maxBytes)
	}
	l := layout{kind: oneFilter, parts: []raw.Header{first}}
	size := first.Size()
	if in.size <= size {
		return l, nil
	}
	second, err := headerAt(in, size)
	switch {
	case err != nil:
		return layout{}, fmt.Errorf("%w: after a filter of %d bytes: %w", errNotFilter, size, err)
	case over(size + second.Size()):
		return layout{}, fmt.Errorf("two filters of %d bytes, more than -max-bytes %d", size+second.Size(), maxBytes)
	case second.Words > first.Words && second.Strategy == first.Strategy:
		l.kind, l.parts = scalableStages, append(l.parts, second)
		return l, readStages(in, &l, size+second.Size(), maxBytes)
	case second != first:
		return layout{}, fmt.Errorf("%w: a filter of %d bytes is followed by a different one (%s, then %s)",
			errNotFilter, size, describe(first), describe(second))
	case in.size > 2*size:
		return layout{}, fmt.Errorf("%w: more bytes after two filters of %d bytes", errNotFilter, size)
	}
	l.kind, l.parts = rotatingSnapshot, append(l.parts, second)
	return l, nil
}

// readStages reads the headers of a Scalable's stages after the first
// ones, which l holds and which take size bytes: filters of one strategy,
// each larger than the one before, until the input ends.
func readStages(in *input, l *layout, size, maxBytes int64) error {
	for size < in.size {
		last := l.parts[len(l.parts)-1]
		next, err := headerAt(in, size)
		switch {
		case err != nil:
			return fmt.Errorf("%w: after %d stages of a Scalable, %d bytes: %w", errNotFilter, len(l.parts), size, err)
		case maxBytes > 0 && size+next.Size() > maxBytes:
			return fmt.Errorf("%d stages of a Scalable, %d bytes, and one of %d more: more than -max-bytes %d", len(l.parts), size, next.Size(), maxBytes)
		case next.Words <= last.Words || next.Strategy != last.Strategy:
			return fmt.Errorf("%w: stage %d of a Scalable (%s) is followed by one that is not larger (%s)",
				errNotFilter, len(l.parts)-1, describe(last), describe(next))
		}
		l.parts = append(l.parts, next)
		size += next.Size()
	}
	return nil
}

// headerAt reads the header of the filter at byte off of in. It returns an
// error wrapping errNoOrdinal if the bytes there do not begin with a
// strategy's ordinal, and raw.ParseHeader's error for any other header
// that is wrong or cut short.
func headerAt(in *input, off int64) (raw.Header, error) {
	var b [raw.HeaderSize]byte
	n, err := in.at.ReadAt(b[:], off)
	if err != nil && !errors.Is(err, io.EOF) {
		return raw.Header{}, err
	}
	h, err := raw.ParseHeader(b[:n])
	if errors.Is(err, strategy.ErrUnknownOrdinal) {
		return raw.Header{}, fmt.Errorf("it begins %q, and %w", b[:n], errNoOrdinal)
	}
	return h, err
}

func describe(h raw.Header) string {
	return fmt.Sprintf("%v, %d bits, %d hash functions", h.Strategy, h.Words*64, h.NumHashFunctions)
}

// A file is a filter file as the library reads it: one filter, mapped
// where it can be and read otherwise, a Rotating or a Scalable.
type file[T any] struct {
	layout
	filter   *bloom.Filter[T]
	mapped   *mapped.Filter[T]
	rotating *bloom.Rotating[T]
	scalable *bloom.Scalable[T]
}

// openFile opens the filter file name ("-": standard input) for values
// that f funnels, refusing with maxBytes > 0, by their headers, filters
// that take more. A regular file of one filter is opened in place, with
// package mapped, if canMap is set: a lookup then reads only the pages it
// needs, and opening takes no time whatever the file's size. Otherwise the
// library's readers read it: bloom.ReadFrom, ReadRotating or ReadScalable.
// The caller closes the file.
func openFile[T any](e *env, name string, f funnel.Funnel[T], maxBytes int64, canMap bool) (*file[T], error) {
	in, err := e.openInput(name, maxBytes)
	if err != nil {
		return nil, err
	}
	defer in.close()
	l, err := readLayout(in, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", displayName(name), err)
	}
	out := &file[T]{layout: l}
	switch {
	case l.kind == oneFilter && canMap && in.file != nil:
		out.mapped, err = mapped.Open(name, f)
		var pathErr *os.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err // named below, as every error of the file is
		}
	case l.kind == oneFilter:
		out.filter, err = bloom.ReadFrom(in.reader(), f)
	case l.kind == rotatingSnapshot:
		out.rotating, err = bloom.ReadRotating(in.reader(), f)
	default:
		out.scalable, err = bloom.ReadScalable(in.reader(), f)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", displayName(name), err)
	}
	return out, nil
}

// close releases a mapped filter's file.
func (f *file[T]) close() error {
	if f.mapped != nil {
		return f.mapped.Close()
	}
	return nil
}

// mightContainMany appends to dst whether each of vs might be in the file:
// in its filter, in either generation of a Rotating, in any stage of a
// Scalable, as their MightContainMany answers.
func (f *file[T]) mightContainMany(dst []bool, vs []T) []bool {
	switch {
	case f.mapped != nil:
		return f.mapped.MightContainMany(dst, vs)
	case f.filter != nil:
		return f.filter.MightContainMany(dst, vs)
	case f.rotating != nil:
		return f.rotating.MightContainMany(dst, vs)
	}
	return f.scalable.MightContainMany(dst, vs)
}

// stdinTwice reports whether names holds "-" more than once: standard
// input can be read only once.
func stdinTwice(names []string) bool {
	n := 0
	for _, name := range names {
		if name == "-" {
			n++
		}
	}
	return n > 1
}
