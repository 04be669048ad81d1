package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mitzbloom/mitzbloom/bloom"
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
	// errOverLimit reports a filter larger than -max-bytes.
	errOverLimit = errors.New("over the limit")
)

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

// displayName is how errors name an input.
func displayName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}

// readFilters reads a file ("-": standard input) in Guava's writeTo format:
// one filter, the two generations, current first, that Rotating.WriteTo
// writes, or the stages, oldest first, that Scalable.WriteTo writes. With maxBytes > 0 it refuses, by the headers alone, a file whose
// filters take more bytes than that.
func readFilters[T any](e *env, name string, f funnel.Funnel[T], maxBytes int64) ([]*bloom.Filter[T], error) {
	r, closeFile, err := e.open(name)
	if err != nil {
		return nil, err
	}
	defer closeFile()
	filters, err := decodeFilters(r, f, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", displayName(name), err)
	}
	return filters, nil
}

func decodeFilters[T any](r io.Reader, f funnel.Funnel[T], maxBytes int64) ([]*bloom.Filter[T], error) {
	limit := int64(-1) // no limit
	if maxBytes > 0 {
		limit = maxBytes
	}
	first, size, err := readFilter(r, f, limit)
	switch {
	case errors.Is(err, io.EOF):
		return nil, errors.New("empty, not a Guava filter file")
	case errors.Is(err, errNoOrdinal):
		return nil, fmt.Errorf("not a Guava filter file: %w", err)
	case errors.Is(err, errOverLimit):
		return nil, fmt.Errorf("a filter of %d bytes, more than -max-bytes %d", size, maxBytes)
	case err != nil:
		return nil, err
	}
	if limit >= 0 {
		limit -= size
	}

	// ReadFrom reads no further than its filter, so whatever follows is
	// still in r.
	rest, more, err := peek(r)
	if err != nil {
		return nil, err
	}
	if !more {
		return []*bloom.Filter[T]{first}, nil
	}
	second, size2, err := readFilter(rest, f, limit)
	switch {
	case errors.Is(err, errNoOrdinal) || errors.Is(err, bloom.ErrCorrupt):
		return nil, fmt.Errorf("%w: after a filter of %d bytes: %w", errNotFilter, size, err)
	case errors.Is(err, errOverLimit):
		return nil, fmt.Errorf("two filters of %d bytes, more than -max-bytes %d", size+size2, maxBytes)
	case err != nil:
		return nil, fmt.Errorf("after a filter of %d bytes: %w", size, err)
	}
	if second.BitSize() > first.BitSize() && raw.Strategy(second) == raw.Strategy(first) {
		if limit >= 0 {
			limit -= size2
		}
		return readStages(rest, f, limit, maxBytes, []*bloom.Filter[T]{first, second}, size+size2)
	}
	if second.BitSize() != first.BitSize() || second.NumHashFunctions() != first.NumHashFunctions() || raw.Strategy(second) != raw.Strategy(first) {
		return nil, fmt.Errorf("%w: a filter of %d bytes is followed by a different one (%s, then %s)",
			errNotFilter, size, describe(first), describe(second))
	}
	if _, more, err := peek(rest); err != nil || more {
		if err == nil {
			err = fmt.Errorf("%w: more bytes after two filters of %d bytes", errNotFilter, size)
		}
		return nil, err
	}
	return []*bloom.Filter[T]{first, second}, nil
}

// readFilter reads one filter from r and returns it and its size in bytes.
// It returns io.EOF if r is empty, an error wrapping errNoOrdinal if r does
// not begin with a strategy's ordinal, and, having read only the header,
// errOverLimit if limit >= 0 and the filter takes more than limit bytes.
func readFilter[T any](r io.Reader, f funnel.Funnel[T], limit int64) (*bloom.Filter[T], int64, error) {
	var h [raw.HeaderSize]byte
	n, err := io.ReadFull(r, h[:])
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return nil, 0, io.EOF
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
		return nil, 0, err
	}
	header, err := raw.ParseHeader(h[:n])
	switch {
	case errors.Is(err, strategy.ErrUnknownOrdinal):
		return nil, 0, fmt.Errorf("it begins %q, and %w", h[:n], errNoOrdinal)
	case err == nil && limit >= 0 && header.Size() > limit:
		return nil, header.Size(), errOverLimit
	}
	// A short or corrupt header is for ReadFrom to report.
	filter, err := bloom.ReadFrom(io.MultiReader(bytes.NewReader(h[:n]), r), f)
	if err != nil {
		return nil, 0, err
	}
	return filter, serializedSize(filter), nil
}

// peek reports whether r has more bytes, and returns a reader of all of
// them.
func peek(r io.Reader) (io.Reader, bool, error) {
	var b [1]byte
	n, err := io.ReadFull(r, b[:])
	if errors.Is(err, io.EOF) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	return io.MultiReader(bytes.NewReader(b[:n]), r), true, nil
}

func serializedSize[T any](f *bloom.Filter[T]) int64 { return raw.HeaderSize + f.BitSize()/8 }

func describe[T any](f *bloom.Filter[T]) string {
	return fmt.Sprintf("%v, %d bits, %d hash functions", raw.Strategy(f), f.BitSize(), f.NumHashFunctions())
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
