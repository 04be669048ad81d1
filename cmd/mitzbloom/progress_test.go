package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFormatProgress(t *testing.T) {
	for _, c := range []struct {
		keys, bytes, total int64
		elapsed            time.Duration
		want               string
	}{
		{0, 0, 0, 0, "0 keys"},
		{1234, 5000, 0, time.Second, "1234 keys, 1234 keys/s"},
		{1_250_000, 42, 100, 500 * time.Millisecond, "1.25M keys, 2.50M keys/s, 42%"},
		{10_000_000, 200, 200, 4 * time.Second, "10.0M keys, 2.50M keys/s, 100%"},
		// A file that grows while it is read stays at 100%.
		{3, 300, 200, time.Second, "3 keys, 3 keys/s, 100%"},
	} {
		if got := formatProgress(c.keys, c.bytes, c.total, c.elapsed); got != c.want {
			t.Errorf("formatProgress(%d, %d, %d, %v) = %q, want %q", c.keys, c.bytes, c.total, c.elapsed, got, c.want)
		}
	}
}

func TestFormatCount(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 9999: "9999", 10_000: "10.0k", 99_949: "99.9k", 99_950: "100k", 999_499: "999k",
		999_500: "1.00M", 1_234_567: "1.23M", 12_345_678: "12.3M", 123_456_789: "123M",
		3_000_000_000: "3.00G", 9_223_372_036_854_775_807: "9.22E",
	} {
		if got := formatCount(n); got != want {
			t.Errorf("formatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestProgressDraws(t *testing.T) {
	var buf bytes.Buffer
	p := startProgress(&buf, 1000)
	p.add(10, 500)
	p.stop()
	// stop draws the final state once more, even before the first tick.
	out := buf.String()
	if !strings.HasPrefix(out, "\r10 keys, ") || !strings.Contains(out, ", 50%") || !strings.HasSuffix(out, "\n") {
		t.Errorf("progress drew %q", out)
	}

	var nilProgress *progress
	nilProgress.add(1, 1) // a quiet build's progress does nothing
	nilProgress.stop()
}

func TestIsTerminal(t *testing.T) {
	// The standard library can tell a character device, such as a
	// terminal or /dev/null, from a pipe or a file; progress goes only to
	// the former.
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, c := range []struct {
		name string
		w    io.Writer
		want bool
	}{
		{os.DevNull, devNull, true},
		{"a pipe", w, false},
		{"a file", file, false},
		{"a buffer", &bytes.Buffer{}, false},
	} {
		if got := isTerminal(c.w); got != c.want {
			t.Errorf("isTerminal(%s) = %t, want %t", c.name, got, c.want)
		}
	}
}
