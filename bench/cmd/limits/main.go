// Limits measures how close mitzbloom comes to the memory of the machine it
// runs on, for filters larger than the caches. In one run, for each size
// and key type, it times the two limits over memory made as a filter's is
// (a chain of dependent random loads: the latency of a miss; independent
// random loads: the throughput of misses), then mitzbloom's operations,
// each run right after a run of the limit it should approach, and prints
// each operation's time per key over that limit:
//
//	go -C bench run ./cmd/limits                       # 1e6, 1e7, 1e8; about 20 minutes
//	go -C bench run ./cmd/limits -sizes 1e8 -count 5
//
// A batch operation is compared with as many independent loads as the
// cache lines it must read (k for a present key, the mean number of probes
// of an absent one at the filter's fill); a single lookup chained to the
// answer of the one before is compared with one dependent load. Run it on
// an otherwise idle machine: the load average is printed before and after.
package main

import (
	"flag"
	"fmt"
	"log"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bench"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("limits: ")
	testing.Init()
	sizes := flag.String("sizes", "1e6,1e7,1e8", "comma-separated filter sizes")
	keys := flag.String("keys", "int64,hostport", "comma-separated key types")
	count := flag.Int("count", 3, "runs of each benchmark, the median reported")
	benchtime := flag.Duration("benchtime", time.Second, "timed work of each run")
	flag.Parse()
	if err := flag.Set("test.benchtime", benchtime.String()); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("load average before: %s\n\n", bench.LoadAverage())
	fmt.Println("| n | key | operation | ns/key | lines | ns/line | limit | ratio | target |")
	fmt.Println("|---|---|---|---:|---:|---:|---|---:|---:|")
	for _, s := range strings.Split(*sizes, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || f < 1 {
			log.Fatalf("-sizes: %q is not a number of keys", s)
		}
		n := int64(f)
		for _, key := range strings.Split(*keys, ",") {
			cases := casesFor(key, n)
			if cases == nil {
				log.Fatalf("-keys: no key type %q", key)
			}
			report(n, key, cases, *count)
		}
	}
	releaseFixtures()
	fmt.Printf("\nload average after: %s\n", bench.LoadAverage())
}

// report runs every case count times, round robin, and prints a row per
// case. The limits move by half from minute to minute on a shared machine,
// so an operation's ratio is not taken to a limit timed minutes away:
// every run of an operation follows a run of its limit, and the ratio
// reported is the median of the runs' ratios, each to the limit timed just
// before it.
func report(n int64, key string, cases []limitCase, count int) {
	byName := make(map[string]limitCase)
	for _, c := range cases {
		byName[c.Name] = c
	}
	time1 := func(c limitCase) float64 {
		r := testing.Benchmark(c.Run)
		if r.N == 0 {
			log.Fatalf("n=%s key=%s %s: the benchmark failed", bench.SizeName(n), key, c.Name)
		}
		return float64(r.T.Nanoseconds()) / float64(r.N)
	}
	runs := make([][]float64, len(cases))   // ns a key of each run
	ratios := make([][]float64, len(cases)) // each run's over its limit's
	limits := make([][]float64, len(cases)) // that limit, ns a load
	for range count {
		for i, c := range cases {
			limit := 0.0
			switch {
			case c.Dependent:
				limit = time1(byName[dependentLoadsCase])
			case c.Lines != nil:
				limit = time1(byName[independentLoadsCase])
			}
			t := time1(c)
			runs[i] = append(runs[i], t)
			if limit > 0 {
				limits[i] = append(limits[i], limit)
				lines := 1.0
				if !c.Dependent {
					lines = c.Lines()
				}
				ratios[i] = append(ratios[i], t/(lines*limit))
			}
		}
	}
	ns := make(map[string]float64)
	for i, c := range cases {
		ns[c.Name] = bench.Median(runs[i])
	}
	name := bench.SizeName(n)
	huge := memoryHugePageShare()
	for i, c := range cases {
		t := ns[c.Name]
		switch c.Name {
		case hashCase, hashChainedCase:
			fmt.Printf("| %s | %s | %s | %.1f | | | | | |\n", name, key, c.Name, t)
			continue
		case dependentLoadsCase, independentLoadsCase, groupLoadsCase:
			fmt.Printf("| %s | %s | %s (huge pages: %s) | %.1f | | | | | |\n", name, key, c.Name, share(huge), t)
			continue
		}
		lines, perLine, limit, ratio := "", "", "", 0.0
		if c.Lines != nil {
			l := c.Lines()
			lines, perLine = fmt.Sprintf("%.2f", l), fmt.Sprintf("%.1f", t/l)
		}
		if len(ratios[i]) > 0 {
			ratio = bench.Median(ratios[i])
			lim := bench.Median(limits[i])
			if c.Dependent {
				limit = fmt.Sprintf("%.1f (one dependent; k together: %.1f)", lim, ns[groupLoadsCase])
			} else {
				limit = fmt.Sprintf("%s × %.1f (independent)", lines, lim)
			}
		}
		target := ""
		if c.Target > 0 {
			mark := "met"
			if ratio > c.Target {
				mark = "not met"
			}
			target = fmt.Sprintf("≤ %.1f, %s", c.Target, mark)
		}
		r := ""
		if ratio > 0 {
			r = fmt.Sprintf("%.2f", ratio)
		}
		fmt.Printf("| %s | %s | %s | %.1f | %s | %s | %s | %s | %s |\n", name, key, c.Name, t, lines, perLine, limit, r, target)
	}
}

func share(x float64) string {
	if x < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}
