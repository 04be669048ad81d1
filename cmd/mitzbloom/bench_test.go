package main

import (
	"bufio"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	path := hostPortsFile(b)
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
			f, err := bloom.NewBuilder(funnel.String, benchKeys, 0.01)
			if err != nil {
				b.Fatal(err)
			}
			f.PutMany(keys)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchKeys, "ns/key")
	})
}

// hostPorts is the input file of BenchmarkBuildVsPutMany, made once for
// all its runs in the directory TestMain removes at the end.
var hostPorts struct {
	once sync.Once
	path string
	err  error
}

func hostPortsFile(b *testing.B) string {
	hostPorts.once.Do(func() {
		path := filepath.Join(filepath.Dir(binPath), "hostports.txt")
		hostPorts.path, hostPorts.err = path, writeHostPorts(path, benchKeys)
	})
	if hostPorts.err != nil {
		b.Fatal(hostPorts.err)
	}
	return hostPorts.path
}

// writeHostPorts writes n distinct-looking host:port lines to path, the same
// ones every time: IPv4 addresses, some IPv6 ones and some host names, with
// ports from well-known to ephemeral.
func writeHostPorts(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
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
		f.Close()
		return err
	}
	return f.Close()
}

func fileSize(tb testing.TB, path string) int64 {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}
