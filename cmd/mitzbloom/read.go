package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// headerSize is the size of a serialized filter's header, before its words.
const headerSize = 6

// errNotFilter reports a file that is neither one filter nor the two
// generations of a Rotating.
var errNotFilter = errors.New("not a filter or a Rotating snapshot")

// readFilters reads a file in Guava's writeTo format: one filter, or the two
// generations, current first, that Rotating.WriteTo writes. With maxBytes > 0
// it refuses, by the headers alone, a file whose filters take more bytes
// than that.
func readFilters[T any](name string, f funnel.Funnel[T], maxBytes int64) ([]*bloom.Filter[T], error) {
	file, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	filters, err := decodeFilters(file, f, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return filters, nil
}

func decodeFilters[T any](r io.Reader, f funnel.Funnel[T], maxBytes int64) ([]*bloom.Filter[T], error) {
	budget := int64(-1) // no limit
	if maxBytes > 0 {
		budget = maxBytes
	}
	first, err := readLimited(r, f, budget)
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: the file is empty", bloom.ErrCorrupt)
	}
	if err != nil {
		return nil, err
	}
	size := serializedSize(first)
	if budget >= 0 {
		budget = max(0, budget-size)
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
	second, err := readLimited(rest, f, budget)
	if errors.Is(err, bloom.ErrCorrupt) {
		return nil, fmt.Errorf("%w: after a filter of %d bytes: %w", errNotFilter, size, err)
	}
	if err != nil {
		return nil, fmt.Errorf("after a filter of %d bytes: %w", size, err)
	}
	if second.BitSize() != first.BitSize() || second.NumHashFunctions() != first.NumHashFunctions() || second.Strategy() != first.Strategy() {
		return nil, fmt.Errorf("%w: %w: a filter of %d bytes is followed by a different one (%s, then %s)",
			bloom.ErrCorrupt, errNotFilter, size, describe(first), describe(second))
	}
	if _, more, err := peek(rest); err != nil || more {
		if err == nil {
			err = fmt.Errorf("%w: %w: more bytes after two filters of %d bytes", bloom.ErrCorrupt, errNotFilter, size)
		}
		return nil, err
	}
	return []*bloom.Filter[T]{first, second}, nil
}

// readLimited reads one filter of at most limit bytes, or of any size if
// limit is negative.
func readLimited[T any](r io.Reader, f funnel.Funnel[T], limit int64) (*bloom.Filter[T], error) {
	if limit < 0 {
		return bloom.ReadFrom(r, f)
	}
	return bloom.ReadFromLimit(r, f, max(0, limit-headerSize)*8)
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

func serializedSize[T any](f *bloom.Filter[T]) int64 { return headerSize + f.BitSize()/8 }

func describe[T any](f *bloom.Filter[T]) string {
	return fmt.Sprintf("%v, %d bits, %d hash functions", f.Strategy(), f.BitSize(), f.NumHashFunctions())
}
