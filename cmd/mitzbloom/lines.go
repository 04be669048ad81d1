package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

const (
	// chunkSize is how much input is read at once: large enough that the
	// read calls and the chunk's conversion to a string cost little per
	// line, small enough to stay in the CPU's caches while its lines are
	// put.
	chunkSize = 1 << 20
	// maxLineSize bounds the memory one line can take: the reader holds a
	// whole line at a time, and a file without newlines would otherwise be
	// read into memory whole.
	maxLineSize = 64 << 20
)

// errLineTooLong reports a line longer than maxLineSize.
var errLineTooLong = fmt.Errorf("line longer than %d MiB", maxLineSize>>20)

// A lineReader splits its input into lines, a chunk at a time. A line ends
// at "\n", and a "\r" before it is dropped, as Java's
// BufferedReader.readLine drops it; the last line needs no "\n". An empty
// input has no lines, and neither has the end of an input that ends in "\n".
type lineReader struct {
	r     io.Reader
	buf   []byte
	start int // the first byte of buf not yet returned
	end   int // the end of the bytes read into buf
	clean int // the end of the bytes after start known to hold no '\n'
	eof   bool
	line  int64 // the number of lines returned so far
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: r, buf: make([]byte, chunkSize)}
}

// next appends the lines of the next chunk to dst and returns the extended
// slice, the number of the first of the lines (counting from 1) and the
// number of input bytes they took. At the end of the input it returns
// io.EOF.
func (lr *lineReader) next(dst []string) (lines []string, first int64, n int, err error) {
	for {
		// Only the bytes read since the last look can hold a newline: a
		// long line arriving in small reads is searched once.
		if i := bytes.LastIndexByte(lr.buf[lr.clean:lr.end], '\n'); i >= 0 {
			return lr.split(dst, lr.clean+i+1)
		}
		lr.clean = lr.end
		if lr.eof {
			if lr.start == lr.end {
				return dst, lr.line + 1, 0, io.EOF
			}
			return lr.split(dst, lr.end)
		}
		if err := lr.fill(); err != nil {
			return dst, lr.line + 1, 0, err
		}
	}
}

// fill reads more input, after moving what is left to the front of buf or
// growing buf for a line longer than it.
func (lr *lineReader) fill() error {
	if lr.start > 0 {
		lr.end = copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.clean -= lr.start
		lr.start = 0
	}
	if lr.end == len(lr.buf) {
		if len(lr.buf) >= maxLineSize {
			return fmt.Errorf("line %d: %w", lr.line+1, errLineTooLong)
		}
		lr.buf = append(lr.buf, make([]byte, len(lr.buf))...)
	}
	n, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += n
	switch {
	case errors.Is(err, io.EOF):
		lr.eof = true
	case err != nil:
		return err
	}
	return nil
}

// split appends the lines of buf[lr.start:end], which ends a line, to dst.
func (lr *lineReader) split(dst []string, end int) ([]string, int64, int, error) {
	// One string for the whole chunk: the lines are substrings of it,
	// without an allocation each, and stay valid after buf is reused.
	n := end - lr.start
	chunk := string(lr.buf[lr.start:end])
	lr.start, lr.clean = end, end
	first := lr.line + 1
	before := len(dst)
	for len(chunk) > 0 {
		line, rest, ended := strings.Cut(chunk, "\n")
		if ended {
			line = strings.TrimSuffix(line, "\r")
		}
		dst = append(dst, line)
		chunk = rest
	}
	lr.line += int64(len(dst) - before)
	return dst, first, n, nil
}

// countLines returns the number of lines a lineReader finds in r.
func countLines(r io.Reader) (int64, error) {
	buf := make([]byte, chunkSize)
	var n int64
	last := byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += int64(bytes.Count(buf[:k], []byte{'\n'}))
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}
