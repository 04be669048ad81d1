package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bench"
)

// sample returns a report of made-up numbers: mitzbloom takes 10 ns per key
// everywhere and every other contender a known multiple of that.
func sample() *Report {
	r := &Report{Name: "sample", Settings: Settings{P: 0.01, Sizes: []int64{1e4, 1e8}, Count: 3, Benchtime: "1s", Chunk: 256, ProbeHalf: 1 << 20, HeldOut: 1e6, JavaWarmup: "3s", JavaIteration: "1s"},
		Machine: Machine{CPU: "Test CPU", Cores: 2, GOMAXPROCS: 2, OS: "linux", Arch: "amd64", Go: "go1.26"}}
	times := map[string]float64{"mitzbloom": 10, "mitzbloom-batch": 8, guava: 30, "bits-and-blooms": 12, "blobloom": 4, "map": 20}
	for _, key := range []string{"int64", "hostport"} {
		for _, n := range r.Settings.Sizes {
			for c, ns := range times {
				if c == "map" && key == "hostport" && n == 1e8 {
					r.Skipped = append(r.Skipped, Skip{Key: key, N: n, Contender: c, Why: "too big"})
					continue
				}
				ops := bench.Ops
				if c == guava {
					ops = ops[:2]
				}
				for _, op := range ops {
					res := Result{Op: op, Key: key, N: n, Contender: c}
					for _, f := range []float64{0.9, 1.1, 1} {
						allocs := 0.0
						if c == guava {
							allocs = -1
						}
						res.Runs = append(res.Runs, Run{Iterations: 1000, NsPerOp: ns * f, AllocsPerOp: allocs, BytesPerOp: 16})
					}
					res.summarize()
					r.Results = append(r.Results, res)
				}
				r.Memory = append(r.Memory, memoryOf(key, c, bench.Stats{N: n, Bits: 96 * n / 10, HeapBytes: 12 * n / 10, HeldOut: 1000, FalsePositives: 10}))
			}
		}
	}
	return r
}

func TestMarkdown(t *testing.T) {
	r := sample()
	var b bytes.Buffer
	r.markdown(&b)
	md := b.String()
	// Medians, and ratios to mitzbloom's 10 ns.
	assert.Contains(t, md, "| mitzbloom | 10.0 | 10.0 | 0 |")
	assert.Contains(t, md, "| guava | 30.0 (3.00×) | 30.0 (3.00×) | 16 B/op |")
	assert.Contains(t, md, "| blobloom | 4.0 (0.40×) | 4.0 (0.40×) | 0 |")
	assert.Contains(t, md, "| map | 20.0 (2.00×) | skipped¹ | 0 |")
	assert.Contains(t, md, "¹ map, hostport keys, n = 1e8: too big.")
	assert.Contains(t, md, "| 1e4 | mitzbloom | 9.60 | 1.20 |  | 1.000 % | 0 |")
	assert.Contains(t, md, "| 1e4 | map | 9.60 | 1.20 | 1.00× | 0.01 (exact) | 0 |")

	// Ratios: mitzbloom's 10 ns over bits-and-blooms' 12, Guava's 30 and
	// blobloom's 4; the batch's 8 over blobloom's 4.
	assert.Contains(t, md, "| operation | mitzbloom ÷ peer | int64 1e4 | int64 1e8 | hostport 1e4 | hostport 1e8 |")
	assert.Contains(t, md, "| Put | mitzbloom ÷ bits-and-blooms | 0.83 |")
	assert.Contains(t, md, "| MightContain | mitzbloom ÷ guava | 0.33 |")
	assert.Contains(t, md, "| Put | mitzbloom ÷ blobloom | 2.50 |")
	assert.Contains(t, md, "| MightContain | mitzbloom-batch ÷ blobloom | 2.00 |")
	assert.NotContains(t, md, "FAIL")
	assert.Contains(t, md, "mitzbloom allocated nothing in any benchmark.")

	r.result(bench.MightContain, "int64", 1e8, "map").AllocsPerOp = 1
	b.Reset()
	r.markdown(&b)
	assert.Contains(t, b.String(), "mitzbloom allocated nothing in any benchmark.", "only mitzbloom's allocations count")
	r.result(bench.PutParallel, "int64", 1e4, "mitzbloom-batch").AllocsPerOp = 2
	b.Reset()
	r.markdown(&b)
	assert.Contains(t, b.String(), "mitzbloom allocated in: PutParallel/n=1e4/key=int64/filter=mitzbloom-batch (2 allocs/op).")
}

func TestBenchfmt(t *testing.T) {
	r := sample()
	var b bytes.Buffer
	r.benchfmt(&b)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	assert.Equal(t, "goos: linux", lines[0])
	assert.Contains(t, lines, "BenchmarkPut/n=1e4/key=int64/filter=mitzbloom-2\t1000\t9.00 ns/op\t16 B/op\t0 allocs/op")
	assert.Contains(t, lines, "BenchmarkMightContain/n=1e8/key=hostport/filter=guava-2\t1000\t33.00 ns/op\t16 B/op")
	runs := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "Benchmark") {
			runs++
		}
	}
	assert.Equal(t, 3*len(r.Results), runs, "a line per run")
}

func TestAddGuava(t *testing.T) {
	r := &Report{}
	r.addGuava([]bench.GuavaResult{
		{Op: bench.Put, Key: "int64", N: 1e4, NsPerOp: 30, BytesPerOp: 100, Ops: 10},
		{Op: bench.Put, Key: "int64", N: 1e4, NsPerOp: 10, BytesPerOp: 300, Ops: 10},
		{Op: bench.Put, Key: "int64", N: 1e4, NsPerOp: 20, BytesPerOp: 200, Ops: 10},
		{Op: bench.MightContain, Key: "int64", N: 1e4, NsPerOp: 5, BytesPerOp: 0, Ops: 10},
	})
	require.Len(t, r.Results, 2)
	put := r.result(bench.Put, "int64", 1e4, guava)
	require.NotNil(t, put)
	assert.Len(t, put.Runs, 3)
	assert.Equal(t, 20.0, put.NsPerOp)
	assert.Equal(t, 200.0, put.BytesPerOp)
	assert.Equal(t, -1.0, put.AllocsPerOp, "unknown on the JVM")
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	r := sample()
	// The report goes to stdout too; keep the test output short.
	stdout := os.Stdout
	os.Stdout, _ = os.Open(os.DevNull)
	err := r.write(dir)
	os.Stdout = stdout
	require.NoError(t, err)
	for _, ext := range []string{".md", ".json", ".txt", ".png"} {
		fi, err := os.Stat(filepath.Join(dir, "sample"+ext))
		require.NoError(t, err)
		assert.Positive(t, fi.Size(), ext)
	}
	js, err := os.ReadFile(filepath.Join(dir, "sample.json"))
	require.NoError(t, err)
	var back Report
	require.NoError(t, json.Unmarshal(js, &back))
	assert.Equal(t, r.Results, back.Results)
	png, err := os.ReadFile(filepath.Join(dir, "sample.png"))
	require.NoError(t, err)
	assert.Equal(t, "\x89PNG", string(png[:4]))

	// -from writes the same report again from the JSON alone.
	again := t.TempDir()
	os.Stdout, _ = os.Open(os.DevNull)
	err = run([]string{"-from", filepath.Join(dir, "sample.json"), "-out", again})
	os.Stdout = stdout
	require.NoError(t, err)
	for _, ext := range []string{".md", ".json", ".txt"} {
		want, err := os.ReadFile(filepath.Join(dir, "sample"+ext))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(again, "sample"+ext))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), ext)
	}
	_, err = os.Stat(filepath.Join(again, "sample.png"))
	assert.NoError(t, err)
	assert.Error(t, run([]string{"-from", filepath.Join(dir, "sample.md"), "-out", again}), "a file that is not a report's JSON")
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-quick"})
	require.NoError(t, err)
	assert.Equal(t, []int64{1e4, 1e6}, o.Sizes)
	assert.Equal(t, 1, o.Count)
	assert.Equal(t, "quick", o.Name)

	o, err = parseFlags([]string{"-sizes", "1e5, 2000", "-count", "3"})
	require.NoError(t, err)
	assert.Equal(t, []int64{1e5, 2000}, o.Sizes)
	assert.Equal(t, 3, o.Count)
	assert.Equal(t, "full", o.Name)

	for _, bad := range [][]string{{"-sizes", "1.5"}, {"-sizes", "0"}, {"-run", "("}, {"extra"}} {
		_, err := parseFlags(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestBenchPattern(t *testing.T) {
	pattern := benchPattern(bench.Put, bench.SubName(1e6, "int64", "mitzbloom"))
	assert.Equal(t, "^BenchmarkPut$/^n=1e6$/^key=int64$/^filter=mitzbloom$", pattern)
}
