package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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
	f, err := openFile(q.e, q.file, k.funnel, q.maxBytes, true)
	if err != nil {
		return false, err
	}
	defer f.close()
	out := bufio.NewWriterSize(q.e.stdout, 64<<10)
	allPresent := true
	var values []T
	var present []bool
	// answer looks lines up a batch at a time, so that the lookups of a
	// large filter overlap their memory reads.
	answer := func(lines []string, where func(i int) string) error {
		values = values[:0]
		for i, line := range lines {
			v, err := k.key(line)
			if err != nil {
				return fmt.Errorf("%s: %s is not %s key: %w", where(i), quoteLine(line), k.aKey(), err)
			}
			values = append(values, v)
		}
		present = f.mightContainMany(present[:0], values)
		for i, line := range lines {
			allPresent = allPresent && present[i]
			if !q.quiet {
				word := "no"
				if present[i] {
					word = "maybe"
				}
				fmt.Fprintf(out, "%s\t%s\n", line, word)
			}
		}
		return nil
	}
	if q.keys != nil {
		if err := answer(q.keys, func(i int) string { return fmt.Sprintf("argument %d", i+1) }); err != nil {
			return false, err
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
			if err := answer(lines, func(i int) string { return fmt.Sprintf("stdin:%d", first+int64(i)) }); err != nil {
				return false, err
			}
		}
	}
	return allPresent, out.Flush()
}
