// Compare runs the whole comparison of mitzbloom with the other filters and
// writes the report: every workload, contender, size and operation of
// package bench, Guava on the JVM, the measured false-positive rates and
// memory. From the repository root:
//
//	go -C bench run ./cmd/compare          # the full run, about 17 minutes on 2 cores
//	go -C bench run ./cmd/compare -quick   # a check of the apparatus, under a minute
//
// It prints a Markdown report and writes it, with the raw numbers, under
// bench/results/: NAME.md (the report), NAME.txt (every run, in the go test
// format benchstat reads), NAME.json (everything) and NAME.png (ns per key
// by filter size). NAME is "full", or "quick" with -quick.
//
// The machine should be otherwise idle: the report records its load average
// before and after, so that a busy run shows.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bench"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("compare: ")
	if err := run(os.Args[1:]); err != nil {
		log.Fatal(err)
	}
}

// options are the command's settings once the flags and their defaults
// are resolved.
type options struct {
	Quick     bool
	Sizes     []int64
	Count     int
	Benchtime time.Duration
	// JavaWarmup is how long each JVM runs its benchmark before measuring:
	// the JIT compiles Guava's hashing only after some hundred thousand
	// calls, on a busy machine after some seconds. JavaIteration is the
	// timed work of one Guava iteration, at least 100ms.
	JavaWarmup, JavaIteration time.Duration
	Config                    bench.Config
	Out, Name                 string
	Java                      bool
	Match                     *regexp.Regexp
	// From names the JSON file of an earlier run to write the report
	// from, running nothing.
	From string
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "check the apparatus in under a minute: 1e4 and 1e6 only, fewer keys, one run each; not numbers to quote")
	count := fs.Int("count", 0, "runs of each benchmark, the median reported (default 5; 1 with -quick)")
	benchtime := fs.Duration("benchtime", 0, "timed work of each run (default 250ms; 20ms with -quick)")
	sizes := fs.String("sizes", "", "comma-separated filter sizes (default 1e4,1e6,1e8; 1e4,1e6 with -quick)")
	out := fs.String("out", "results", "directory to write the results to")
	name := fs.String("name", "", "base name of the result files (default full; quick with -quick)")
	noJava := fs.Bool("nojava", false, "leave Guava out")
	match := fs.String("run", "", "run only the benchmarks whose names match this regexp, such as 'MightContain/n=1e6/' (for development)")
	hugeMaps := fs.Bool("hugemaps", false, "also run the map of strings at 1e8 keys, which holds about 8 GB")
	from := fs.String("from", "", "write the report files again from `file`, the JSON of an earlier run, running nothing (after a change to the report or chart)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o := &options{Quick: *quick, Count: 5, Benchtime: 250 * time.Millisecond, JavaWarmup: 3 * time.Second,
		Sizes: bench.Sizes, Out: *out, Name: "full", Java: !*noJava, From: *from}
	if o.Quick {
		o.Count, o.Benchtime, o.JavaWarmup, o.Name = 1, 20*time.Millisecond, time.Second, "quick"
		o.Sizes = []int64{1e4, 1e6}
		o.Config = bench.Config{ProbeHalf: 1 << 16, HeldOut: 100_000}
	}
	if *count > 0 {
		o.Count = *count
	}
	if *benchtime > 0 {
		o.Benchtime = *benchtime
	}
	if *name != "" {
		o.Name = *name
	}
	o.JavaIteration = max(o.Benchtime, 100*time.Millisecond)
	if *sizes != "" {
		o.Sizes = nil
		for _, s := range strings.Split(*sizes, ",") {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || f < 1 || f > 1e10 || f != float64(int64(f)) {
				return nil, fmt.Errorf("-sizes: %q is not a whole number of keys in [1, 1e10]", s)
			}
			o.Sizes = append(o.Sizes, int64(f))
		}
	}
	if *match != "" {
		re, err := regexp.Compile(*match)
		if err != nil {
			return nil, fmt.Errorf("-run: %w", err)
		}
		o.Match = re
	}
	bench.HugeMaps = *hugeMaps
	return o, nil
}

func run(args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	if o.From != "" {
		return rewrite(o.From, o.Out)
	}
	// testing.Benchmark takes its run length from the test flags.
	testing.Init()
	if err := flag.Set("test.benchtime", o.Benchtime.String()); err != nil {
		return err
	}

	ctx := context.Background()
	r := &Report{
		Name:    o.Name,
		Command: "go -C bench run ./cmd/compare " + strings.Join(args, " "),
		Started: time.Now().UTC(),
		Settings: Settings{Quick: o.Quick, P: bench.P, Sizes: o.Sizes, Count: o.Count,
			Benchtime: o.Benchtime.String(), Chunk: bench.Chunk,
			ProbeHalf: o.Config.ProbeHalf, HeldOut: o.Config.HeldOut,
			JavaWarmup: o.JavaWarmup.String(), JavaIteration: o.JavaIteration.String()},
	}
	if r.Settings.ProbeHalf == 0 {
		r.Settings.ProbeHalf = 1 << 20
	}
	if r.Settings.HeldOut == 0 {
		r.Settings.HeldOut = 1e6
	}
	r.Machine = describeMachine(ctx)

	if err := runGo(o, r); err != nil {
		return err
	}
	bench.ReleaseFixtures()
	runtime.GC()
	if err := runGuava(ctx, o, r); err != nil {
		return err
	}
	r.Finished = time.Now().UTC()
	r.Machine.LoadAfter = bench.LoadAverage()
	return r.write(o.Out)
}

// runGo runs the Go benchmarks and measurements, one contender at a time,
// so that each fills its filters once for all of its benchmarks.
func runGo(o *options, r *Report) error {
	for _, n := range o.Sizes {
		for _, w := range bench.Workloads() {
			for _, c := range w.ContenderNames() {
				if err := runContender(o, r, w, c, n); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func runContender(o *options, r *Report, w bench.Workload, c string, n int64) error {
	sub := bench.SubName(n, w.KeyName(), c)
	var ops []bench.Op
	for _, op := range bench.Ops {
		if w.Takes(c, op) && (o.Match == nil || o.Match.MatchString(string(op)+"/"+sub)) {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		return nil
	}
	if why := w.Skip(c, n); why != "" {
		r.Skipped = append(r.Skipped, Skip{Key: w.KeyName(), N: n, Contender: c, Why: why})
		log.Printf("%s: skipped: %s", sub, why)
		return nil
	}
	st, err := w.Measure(c, n, o.Config)
	if err != nil {
		return err
	}
	if st.FalseNegatives > 0 {
		return fmt.Errorf("%s: %d of %d keys put were not found", sub, st.FalseNegatives, st.PresentProbes)
	}
	r.Memory = append(r.Memory, memoryOf(w.KeyName(), c, st))
	log.Printf("%s: filled in %.1fs, %.2f heap bytes per key, false-positive rate %.5f", sub, st.FillSeconds, st.HeapBytesPerKey(), st.FPP())
	for _, op := range ops {
		res := Result{Op: op, Key: w.KeyName(), N: n, Contender: c}
		for range o.Count {
			b := testing.Benchmark(w.Benchmark(op, c, n, o.Config))
			if b.N == 0 {
				// testing.Benchmark keeps what the benchmark said.
				return fmt.Errorf("%s/%s failed; go -C bench test -run '^$' -bench '%s' says why", op, sub, benchPattern(op, sub))
			}
			res.Runs = append(res.Runs, Run{Iterations: int64(b.N), NsPerOp: float64(b.T.Nanoseconds()) / float64(b.N),
				AllocsPerOp: float64(b.AllocsPerOp()), BytesPerOp: float64(b.AllocedBytesPerOp())})
		}
		res.summarize()
		r.Results = append(r.Results, res)
		log.Printf("%s/%s: %.2f ns/op, %.0f allocs/op", op, sub, res.NsPerOp, res.AllocsPerOp)
	}
	return nil
}

// runGuava runs the Java harness, a JVM per benchmark, or records why it
// cannot.
func runGuava(ctx context.Context, o *options, r *Report) error {
	if !o.Java {
		r.GuavaSkipped = "left out with -nojava"
		return nil
	}
	g, err := bench.FindGuava()
	if errors.Is(err, bench.ErrNoJava) {
		r.GuavaSkipped = err.Error()
		log.Printf("Guava skipped: %v", err)
		return nil
	} else if err != nil {
		return err
	}
	r.Machine.Java = g.JavaVersion(ctx)
	r.Machine.Guava = g.Version() + " (" + g.Jar + ")"
	dir, err := os.MkdirTemp("", "guavabench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := g.Compile(ctx, dir); err != nil {
		return err
	}
	for _, w := range bench.Workloads() {
		for _, n := range o.Sizes {
			for _, op := range []bench.Op{bench.Put, bench.MightContain} {
				sub := bench.SubName(n, w.KeyName(), guava)
				if o.Match != nil && !o.Match.MatchString(string(op)+"/"+sub) {
					continue
				}
				gr, err := g.Run(ctx, w.KeyName(), op, n, bench.GuavaSettings{Warmup: o.JavaWarmup, Count: o.Count, Iteration: o.JavaIteration, Config: o.Config})
				if err != nil {
					return err
				}
				r.JVM = gr.JVM
				for _, st := range gr.Stats {
					if st.FalseNegatives > 0 {
						return fmt.Errorf("%s: %d of %d keys put were not found", sub, st.FalseNegatives, st.PresentProbes)
					}
					r.Memory = append(r.Memory, memoryOf(w.KeyName(), guava, st))
				}
				r.addGuava(gr.Results)
				if res := r.result(op, w.KeyName(), n, guava); res != nil {
					log.Printf("%s/%s: %.2f ns/op, %.0f B/op", op, sub, res.NsPerOp, res.BytesPerOp)
				}
			}
		}
	}
	return nil
}

// rewrite writes the report files again, under dir, from the JSON file of
// an earlier run.
func rewrite(from, dir string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	return r.write(dir)
}

// benchPattern returns the go test -bench pattern that selects exactly the
// benchmark of op named sub.
func benchPattern(op bench.Op, sub string) string {
	levels := []string{"^Benchmark" + string(op) + "$"}
	for _, l := range strings.Split(sub, "/") {
		levels = append(levels, "^"+regexp.QuoteMeta(l)+"$")
	}
	return strings.Join(levels, "/")
}

// guava is the name of Guava's column and rows.
const guava = "guava"

func memoryOf(key, contender string, st bench.Stats) Memory {
	return Memory{Key: key, Contender: contender, Stats: st,
		BitsPerKey: st.BitsPerKey(), HeapBytesPerKey: st.HeapBytesPerKey(), FPP: st.FPP()}
}

// outPath returns the path of the result file with the given extension.
func (r *Report) outPath(dir, ext string) string { return filepath.Join(dir, r.Name+ext) }
