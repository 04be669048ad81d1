package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/mitzbloom/mitzbloom/bloom"
)

// A querier is one run of query.
type querier struct {
	e        *env
	file     string
	maxBytes int64
	keys     []string // nil: read keys from standard input
	quiet    bool
}

func (e *env) query(fs *flagSet, args []string) int {
	funnelName := fs.String("funnel", "string", "the funnel `F` the filter was built with: one of\n"+funnelNames())
	quiet := fs.Bool("q", false, "print nothing: only the exit status tells")
	maxBytes := maxBytesFlag(fs)
	args, stop, status := fs.parse(args)
	if stop {
		return status
	}
	if len(args) == 0 {
		return fs.usageError("no FILE to query")
	}
	k, err := keysFor(*funnelName)
	if err != nil {
		return fs.usageError("%v", err)
	}
	q := &querier{e: e, file: args[0], maxBytes: *maxBytes, keys: args[1:], quiet: *quiet}
	switch {
	case len(q.keys) > 0:
	case q.file == "-":
		return fs.usageError("the filter comes from standard input (-), so the keys must be arguments")
	default:
		q.keys = nil
	}
	allPresent, err := k.query(q)
	switch {
	case err != nil:
		return e.fail("query", err)
	case !allPresent:
		return exitAbsent
	}
	return exitOK
}

func (k keyKind[T]) query(q *querier) (bool, error) {
	filters, err := readFilters(q.e, q.file, k.funnel, q.maxBytes)
	if err != nil {
		return false, err
	}
	out := bufio.NewWriterSize(q.e.stdout, 64<<10)
	allPresent := true
	answer := func(line string, where func() string) error {
		v, err := k.key(line)
		if err != nil {
			return fmt.Errorf("%s: %s is not %s key: %w", where(), quoteLine(line), k.aKey(), err)
		}
		present := mightContain(filters, v)
		allPresent = allPresent && present
		if !q.quiet {
			word := "no"
			if present {
				word = "maybe"
			}
			fmt.Fprintf(out, "%s\t%s\n", line, word)
		}
		return nil
	}
	if q.keys != nil {
		for i, key := range q.keys {
			if err := answer(key, func() string { return fmt.Sprintf("argument %d", i+1) }); err != nil {
				return false, err
			}
		}
	} else {
		lr := newLineReader(q.e.stdin)
		var lines []string
		for {
			var first int64
			var err error
			lines, first, _, err = lr.next(lines[:0])
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return false, fmt.Errorf("stdin: %w", err)
			}
			for i, line := range lines {
				if err := answer(line, func() string { return fmt.Sprintf("stdin:%d", first+int64(i)) }); err != nil {
					return false, err
				}
			}
		}
	}
	return allPresent, out.Flush()
}

// mightContain reports whether v might be in any of filters: the filter of
// a file, or the generations of a Rotating, which answers from either.
func mightContain[T any](filters []*bloom.Filter[T], v T) bool {
	for _, f := range filters {
		if f.MightContain(v) {
			return true
		}
	}
	return false
}
