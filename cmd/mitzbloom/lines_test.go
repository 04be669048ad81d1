package main

import (
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

// readAllLines returns every line lr returns, checking the line numbers and
// byte counts it reports on the way.
func readAllLines(t *testing.T, lr *lineReader, input string) []string {
	t.Helper()
	var all, lines []string
	var bytes int
	for {
		lines, first, n, err := lr.next(lines[:0])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if first != int64(len(all))+1 {
			t.Fatalf("chunk starts at line %d after %d lines", first, len(all))
		}
		all = append(all, lines...)
		bytes += n
	}
	if bytes != len(input) {
		t.Errorf("chunks of %d bytes in all, want %d", bytes, len(input))
	}
	return all
}

func TestLineReader(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	long := strings.Repeat("x", 3*chunkSize+17) // longer than a chunk
	for _, c := range []struct {
		name, input string
		want        []string
	}{
		{"empty", "", nil},
		{"one newline", "\n", []string{""}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"CRLF", "a\r\nb\r\n\r\n", []string{"a", "b", ""}},
		{"lone CR kept", "a\rb\n\r", []string{"a\rb", "\r"}},
		{"long line", "a\n" + long + "\nb\n", []string{"a", long, "b"}},
		{"random", "", nil},
	} {
		if c.name == "random" {
			// Many lines across chunk boundaries.
			var b strings.Builder
			for range 200_000 {
				line := strings.Repeat("y", r.IntN(30))
				b.WriteString(line + "\n")
				c.want = append(c.want, line)
			}
			c.input = b.String()
		}
		for _, reader := range []struct {
			name string
			r    io.Reader
		}{
			{"whole", strings.NewReader(c.input)},
			{"one byte at a time", iotest.OneByteReader(strings.NewReader(c.input))},
			{"data with EOF", iotest.DataErrReader(strings.NewReader(c.input))},
		} {
			if reader.name == "one byte at a time" && len(c.input) > 1<<16 {
				continue
			}
			got := readAllLines(t, newLineReader(reader.r), c.input)
			if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
				t.Errorf("%s, %s: %d lines, want %d", c.name, reader.name, len(got), len(c.want))
			}
			n, err := countLines(strings.NewReader(c.input))
			if err != nil || n != int64(len(c.want)) {
				t.Errorf("%s: countLines = %d, %v; want %d", c.name, n, err, len(c.want))
			}
		}
	}
}

func TestLineReaderErrors(t *testing.T) {
	failure := errors.New("disk on fire")
	lr := newLineReader(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(failure)))
	lines, _, _, err := lr.next(nil)
	if err != nil || len(lines) != 1 {
		t.Fatalf("first chunk: %q, %v", lines, err)
	}
	if _, _, _, err := lr.next(nil); !errors.Is(err, failure) {
		t.Errorf("a read error is %v, want %v", err, failure)
	}

	// A line that would not fit in memory is refused, not read whole.
	huge := io.LimitReader(neverNewline{}, maxLineSize+1)
	lr = newLineReader(huge)
	if _, first, _, err := lr.next(nil); !errors.Is(err, errLineTooLong) || first != 1 {
		t.Errorf("a line of %d bytes: line %d, error %v; want errLineTooLong", maxLineSize+1, first, err)
	}
}

// neverNewline is an endless line.
type neverNewline struct{}

func (neverNewline) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'z'
	}
	return len(p), nil
}
