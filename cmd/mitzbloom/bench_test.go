package main

import (
	"bufio"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// benchKeys is the number of keys of BenchmarkBuildVsPutMany: a large
// blocklist, whose filter (12 MB at p = 0.01) is larger than the caches.
const benchKeys = 10_000_000

// BenchmarkBuildVsPutMany compares build of a file of host:port lines with
// the library alone putting the same keys from memory: the difference is
// what reading, splitting and writing cost.
func BenchmarkBuildVsPutMany(b *testing.B) {
	// The parent runs once, so the file is made once for both.
	path := filepath.Join(b.TempDir(), "hostports.txt")
	writeHostPorts(b, path, benchKeys)
	n := strconv.Itoa(benchKeys)

	b.Run("build", func(b *testing.B) {
		out := filepath.Join(b.TempDir(), "filter.bin")
		e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
		b.SetBytes(fileSize(b, path))
		for b.Loop() {
			if status := run([]string{"build", "-n", n, "-p", "0.01", "-q", "-o", out, path}, e); status != exitOK {
				b.Fatalf("build exited with %d", status)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchKeys, "ns/key")
	})

	b.Run("PutMany", func(b *testing.B) {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		keys := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(keys) != benchKeys {
			b.Fatalf("%d keys, want %d", len(keys), benchKeys)
		}
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			f, err := bloom.New(funnel.String, benchKeys, 0.01, bloom.WithUnsynchronizedWrites())
			if err != nil {
				b.Fatal(err)
			}
			f.PutMany(keys)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchKeys, "ns/key")
	})
}

// writeHostPorts writes n distinct-looking host:port lines to path, the same
// ones every time: IPv4 addresses, some IPv6 ones and some host names, with
// ports from well-known to ephemeral.
func writeHostPorts(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	var line []byte
	for i := range n {
		line = line[:0]
		switch i % 10 {
		case 0:
			line = append(line, "host-"...)
			line = strconv.AppendUint(line, r.Uint64N(1e7), 10)
			line = append(line, ".example.net"...)
		case 1:
			line = append(line, "[2001:db8::"...)
			line = strconv.AppendUint(line, r.Uint64N(1<<16), 16)
			line = append(line, ':')
			line = strconv.AppendUint(line, r.Uint64N(1<<16), 16)
			line = append(line, ']')
		default:
			for j := range 4 {
				if j > 0 {
					line = append(line, '.')
				}
				line = strconv.AppendUint(line, r.Uint64N(256), 10)
			}
		}
		line = append(line, ':')
		line = strconv.AppendUint(line, r.Uint64N(65536), 10)
		line = append(line, '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func fileSize(tb testing.TB, path string) int64 {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}
