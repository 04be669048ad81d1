package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mitzbloom/mitzbloom/bench"
)

// A Report is everything one run of the command measured.
type Report struct {
	Name     string
	Command  string
	Machine  Machine
	Settings Settings
	Results  []Result
	Memory   []Memory
	Skipped  []Skip
	// JVM describes the JVM Guava ran on; GuavaSkipped says why Guava did
	// not run, if it did not.
	JVM               string
	GuavaSkipped      string
	Started, Finished time.Time
}

// Settings are the sizes and sample sizes of a run.
type Settings struct {
	Quick         bool
	P             float64
	Sizes         []int64
	Count         int
	Benchtime     string
	Chunk         int
	ProbeHalf     int
	HeldOut       int
	JavaWarmup    string
	JavaIteration string
}

// A Result is one benchmark: an operation on one contender's filter of N
// keys of one type, run Count times.
type Result struct {
	Op        bench.Op
	Key       string
	N         int64
	Contender string
	Runs      []Run
	// NsPerOp, AllocsPerOp and BytesPerOp are medians of the runs.
	// AllocsPerOp is -1 where it is unknown (Guava).
	NsPerOp, AllocsPerOp, BytesPerOp float64
}

// A Run is one run of a benchmark.
type Run struct {
	Iterations                       int64
	NsPerOp, AllocsPerOp, BytesPerOp float64
}

// Memory is the memory and false-positive rate of one contender's full
// filter of N keys.
type Memory struct {
	Key       string
	Contender string
	bench.Stats
	BitsPerKey, HeapBytesPerKey, FPP float64
}

// A Skip is a contender that sat out a size.
type Skip struct {
	Key       string
	N         int64
	Contender string
	Why       string
}

// summarize sets the medians of res from its runs.
func (res *Result) summarize() {
	var ns, allocs, bytes []float64
	for _, r := range res.Runs {
		ns = append(ns, r.NsPerOp)
		allocs = append(allocs, r.AllocsPerOp)
		bytes = append(bytes, r.BytesPerOp)
	}
	res.NsPerOp, res.AllocsPerOp, res.BytesPerOp = bench.Median(ns), bench.Median(allocs), bench.Median(bytes)
}

// addGuava adds the harness's iterations as results.
func (r *Report) addGuava(results []bench.GuavaResult) {
	for _, g := range results {
		i := slices.IndexFunc(r.Results, func(res Result) bool {
			return res.Contender == guava && res.Op == g.Op && res.Key == g.Key && res.N == g.N
		})
		if i < 0 {
			r.Results = append(r.Results, Result{Op: g.Op, Key: g.Key, N: g.N, Contender: guava})
			i = len(r.Results) - 1
		}
		r.Results[i].Runs = append(r.Results[i].Runs, Run{Iterations: g.Ops, NsPerOp: g.NsPerOp, AllocsPerOp: -1, BytesPerOp: g.BytesPerOp})
	}
	for i := range r.Results {
		if r.Results[i].Contender == guava {
			r.Results[i].summarize()
		}
	}
}

// result returns the result of a benchmark, or nil.
func (r *Report) result(op bench.Op, key string, n int64, contender string) *Result {
	for i := range r.Results {
		res := &r.Results[i]
		if res.Op == op && res.Key == key && res.N == n && res.Contender == contender {
			return res
		}
	}
	return nil
}

func (r *Report) memory(key string, n int64, contender string) *Memory {
	for i := range r.Memory {
		m := &r.Memory[i]
		if m.Key == key && m.N == n && m.Contender == contender {
			return m
		}
	}
	return nil
}

func (r *Report) skip(key string, n int64, contender string) *Skip {
	for i := range r.Skipped {
		s := &r.Skipped[i]
		if s.Key == key && s.N == n && s.Contender == contender {
			return s
		}
	}
	return nil
}

// keys returns the key types of the report, in the order of the workloads.
func (r *Report) keys() []string {
	var keys []string
	for _, w := range bench.Workloads() {
		keys = append(keys, w.KeyName())
	}
	return keys
}

// contenders returns the contenders of a key type in report order: the
// workload's, with Guava after mitzbloom's own.
func contenders(key string) []string {
	for _, w := range bench.Workloads() {
		if w.KeyName() != key {
			continue
		}
		names := w.ContenderNames()
		i := 0
		for i < len(names) && strings.HasPrefix(names[i], "mitzbloom") {
			i++
		}
		return slices.Insert(names, i, guava)
	}
	return nil
}

// write writes the report's files and prints the Markdown report.
func (r *Report) write(dir string) error {
	var md bytes.Buffer
	r.markdown(&md)
	js, err := json.MarshalIndent(r, "", "\t")
	if err != nil {
		return err
	}
	var txt bytes.Buffer
	r.benchfmt(&txt)
	for _, f := range []struct {
		ext  string
		data []byte
	}{{".md", md.Bytes()}, {".json", append(js, '\n')}, {".txt", txt.Bytes()}} {
		if err := os.WriteFile(r.outPath(dir, f.ext), f.data, 0o644); err != nil {
			return err
		}
	}
	if err := r.chart(r.outPath(dir, ".png")); err != nil {
		return err
	}
	os.Stdout.Write(md.Bytes())
	log.Printf("wrote %s.{md,json,txt,png}", r.outPath(dir, ""))
	return nil
}

// benchfmt writes every run in the go test benchmark format, Guava's too,
// so that benchstat can read the file.
func (r *Report) benchfmt(w io.Writer) {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: github.com/mitzbloom/mitzbloom/bench\ncpu: %s\n", r.Machine.OS, r.Machine.Arch, r.Machine.CPU)
	fmt.Fprintf(w, "commit: %s\ngo: %s\njava: %s\nguava: %s\n", r.Machine.Commit, r.Machine.Go, r.Machine.Java, r.Machine.Guava)
	for _, res := range r.Results {
		name := fmt.Sprintf("Benchmark%s/%s-%d", res.Op, bench.SubName(res.N, res.Key, res.Contender), r.Machine.GOMAXPROCS)
		for _, run := range res.Runs {
			if run.AllocsPerOp < 0 {
				fmt.Fprintf(w, "%s\t%d\t%.2f ns/op\t%.0f B/op\n", name, run.Iterations, run.NsPerOp, run.BytesPerOp)
			} else {
				fmt.Fprintf(w, "%s\t%d\t%.2f ns/op\t%.0f B/op\t%.0f allocs/op\n", name, run.Iterations, run.NsPerOp, run.BytesPerOp, run.AllocsPerOp)
			}
		}
	}
}

// opTitles describe the operations in the report.
var opTitles = map[bench.Op]string{
	bench.Put:                  "Put into an empty filter, up to n keys",
	bench.MightContain:         "MightContain on a full filter, half the keys present",
	bench.PutParallel:          "Put from all cores at once into one filter",
	bench.MightContainParallel: "MightContain from all cores at once on one filter",
}

func (r *Report) markdown(w io.Writer) {
	m := r.Machine
	title := "Comparison"
	if r.Settings.Quick {
		title = "Quick check (-quick: few keys, one run each; not numbers to quote)"
	}
	fmt.Fprintf(w, "# %s: mitzbloom and other filters\n\n", title)
	fmt.Fprintf(w, "`%s`, %s to %s (UTC).\n\n", strings.TrimSpace(r.Command), r.Started.Format("2006-01-02 15:04"), r.Finished.Format("15:04"))
	fmt.Fprintf(w, "| machine | |\n|---|---|\n")
	for _, row := range [][2]string{
		{"CPU", fmt.Sprintf("%s, %d logical cores (GOMAXPROCS %d)", m.CPU, m.Cores, m.GOMAXPROCS)},
		{"memory", m.Memory},
		{"OS", m.OS + "/" + m.Arch + ", Linux " + m.Kernel},
		{"Go", m.Go},
		{"Java", m.Java},
		{"Guava", m.Guava},
		{"mitzbloom", "commit " + m.Commit},
		{"load average", "before " + m.LoadBefore + "; after " + m.LoadAfter},
	} {
		fmt.Fprintf(w, "| %s | %s |\n", row[0], row[1])
	}
	s := r.Settings
	runs := fmt.Sprintf("the median of %d runs", s.Count)
	if s.Count == 1 {
		runs = "one run"
	}
	fmt.Fprintf(w, "\nEvery filter is made for n expected insertions at p = %g. Times are per key, %s of %s of timed work each (Guava: likewise, of %s each, after %s of the same work to warm up, in a JVM of its own); in parentheses, the time as a multiple of mitzbloom's (above 1: mitzbloom is faster). Batch contenders take %d keys per call. MightContain cycles through %s present and as many absent keys, shuffled; the false-positive rate is measured on %s keys never put.\n",
		s.P, runs, s.Benchtime, s.JavaIteration, s.JavaWarmup, s.Chunk, countName(s.ProbeHalf), countName(s.HeldOut))
	if r.GuavaSkipped != "" {
		fmt.Fprintf(w, "\n**Guava did not run:** %s.\n", r.GuavaSkipped)
	}

	for _, op := range bench.Ops {
		for _, key := range r.keys() {
			r.speedTable(w, op, key)
		}
	}
	for _, key := range r.keys() {
		r.memoryTable(w, key)
	}
	r.ratiosTable(w)
	fmt.Fprintf(w, "\n## Notes\n\n")
	for _, note := range r.notes() {
		fmt.Fprintf(w, "- %s\n", note)
	}
}

// countName writes 1048576 as 2^20 and 1000000 as 1e6.
func countName(n int) string {
	if n > 0 && n&(n-1) == 0 {
		return fmt.Sprintf("2^%d", bitsLen(n)-1)
	}
	return bench.SizeName(int64(n))
}

func bitsLen(n int) int {
	l := 0
	for ; n > 0; n >>= 1 {
		l++
	}
	return l
}

func (r *Report) speedTable(w io.Writer, op bench.Op, key string) {
	var rows [][]string
	for _, c := range contenders(key) {
		row := []string{c}
		found, jvm := false, false
		var allocs, bytes float64 // the most of any size
		for _, n := range r.Settings.Sizes {
			res := r.result(op, key, n, c)
			switch {
			case res != nil:
				found = true
				row = append(row, r.timeCell(res))
				jvm = res.AllocsPerOp < 0
				allocs, bytes = max(allocs, res.AllocsPerOp), max(bytes, res.BytesPerOp)
			case r.skip(key, n, c) != nil:
				row = append(row, "skipped¹")
			default:
				row = append(row, "—")
			}
		}
		if !found {
			continue
		}
		if jvm {
			// The JVM counts bytes, not allocations.
			rows = append(rows, append(row, fmt.Sprintf("%.0f B/op", bytes)))
		} else {
			rows = append(rows, append(row, fmt.Sprintf("%.0f", allocs)))
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### %s: %s keys, ns per key\n\n| filter |", opTitles[op], key)
	for _, n := range r.Settings.Sizes {
		fmt.Fprintf(w, " n = %s |", bench.SizeName(n))
	}
	fmt.Fprintf(w, " allocs/op |\n|---|%s---:|\n", strings.Repeat("---:|", len(r.Settings.Sizes)))
	for _, row := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
}

// timeCell writes a result's time and its ratio to mitzbloom's.
func (r *Report) timeCell(res *Result) string {
	cell := fmt.Sprintf("%.1f", res.NsPerOp)
	if res.Contender == "mitzbloom" {
		return cell
	}
	if ref := r.result(res.Op, res.Key, res.N, "mitzbloom"); ref != nil && ref.NsPerOp > 0 {
		cell += fmt.Sprintf(" (%.2f×)", res.NsPerOp/ref.NsPerOp)
	}
	return cell
}

func (r *Report) memoryTable(w io.Writer, key string) {
	var lines []string
	for _, n := range r.Settings.Sizes {
		ref := r.memory(key, n, "mitzbloom")
		for _, c := range contenders(key) {
			m := r.memory(key, n, c)
			if m == nil {
				if r.skip(key, n, c) != nil {
					lines = append(lines, fmt.Sprintf("| %s | %s | skipped¹ | | | | |", bench.SizeName(n), c))
				}
				continue
			}
			bits, fpp := "—", fmt.Sprintf("%.3f %%", 100*m.FPP)
			if m.Bits > 0 {
				bits = fmt.Sprintf("%.2f", m.BitsPerKey)
			}
			if c == "map" {
				fpp = fmt.Sprintf("%g (exact)", m.FPP)
			}
			ratio := ""
			if ref != nil && c != "mitzbloom" && ref.HeapBytesPerKey > 0 {
				ratio = fmt.Sprintf("%.2f×", m.HeapBytesPerKey/ref.HeapBytesPerKey)
			}
			lines = append(lines, fmt.Sprintf("| %s | %s | %s | %.2f | %s | %s | %d |",
				bench.SizeName(n), c, bits, m.HeapBytesPerKey, ratio, fpp, m.FalseNegatives))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### Memory and false positives: %s keys, p = %g\n\n", key, r.Settings.P)
	fmt.Fprintf(w, "| n | filter | filter bits per key | heap bytes per key | × mitzbloom | false positives measured | false negatives |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

func (r *Report) notes() []string {
	notes := []string{
		"mitzbloom: `bloom.New(funnel.Int64 or funnel.String, n, p)`, strategy MURMUR128_MITZ_64, one `Put` or `MightContain` per key; lock-free, so the parallel runs share one filter with no lock. mitzbloom-batch: the same filter through `PutMany` and `MightContainMany`.",
		"mitzbloom-unsync: `bloom.NewBuilder(…)`, a `Builder` whose `Put` writes bits plainly instead of atomically, so one goroutine may write it at a time, as with bits-and-blooms and blobloom's `Filter`; mitzbloom-unsync-batch: the same through `PutMany`. They run `Put` only: their `MightContain` is mitzbloom's code.",
		"guava: Guava's `BloomFilter.create(Funnels.longFunnel() or stringFunnel(UTF_8), n, p)` on the JVM (bench/java/GuavaBench.java), same keys, timed per chunk of keys after warm-up, one JVM per benchmark; int64 keys are boxed before timing. Its filters are bit-for-bit mitzbloom's, so its false-positive counts equal mitzbloom's. No parallel runs. The JVM reports allocated bytes, not allocations.",
		"bits-and-blooms: `github.com/bits-and-blooms/bloom/v3` v3.7.1, `NewWithEstimates(n, p)`; int64 keys as 8 little-endian bytes through `Add`/`Test` (no allocation), strings through `AddString`/`TestString`. Not safe for concurrent use: the parallel runs lock a `sync.RWMutex` per key (read lock to look up).",
		"blobloom: `github.com/greatroar/blobloom` v0.8.0, `NewOptimized(Config{Capacity: n, FPRate: p})`, a blocked filter (one 512-bit block per key); keys hashed with xxhash (`github.com/cespare/xxhash/v2`), as its README suggests, and the hashing is timed. Parallel runs use its lock-free `SyncFilter`.",
		"map: `make(map[K]struct{}, n)` with the key itself, exact; the parallel runs lock a `sync.RWMutex` per key. Its heap bytes include the strings it keeps.",
		"Put: keys 0, 1, …, n−1 into a filter made for n, then a new filter; making filters and keys is not timed. A run continues where the previous one stopped, so at 1e8 the filter is between empty and partly full. Parallel Put: all goroutines share one filter, taking keys in chunks.",
		"Heap bytes per key: live heap the full filter holds, measured (Guava: its bits / 8).",
	}
	for _, s := range r.Skipped {
		notes = append(notes, fmt.Sprintf("¹ %s, %s keys, n = %s: %s.", s.Contender, s.Key, bench.SizeName(s.N), s.Why))
	}
	return notes
}
