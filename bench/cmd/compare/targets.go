package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mitzbloom/mitzbloom/bench"
)

// The speed targets of issue 3, which the report checks: mitzbloom's time
// per key as a fraction of a reference contender's, at most Limit.
type target struct {
	Op        bench.Op
	Subject   string // a mitzbloom contender
	Reference string
	Limit     float64
	// Sizes limits the target to some filter sizes; nil means all.
	Sizes func(n int64) bool
}

var targets = []target{
	{Op: bench.Put, Subject: "mitzbloom", Reference: "bits-and-blooms", Limit: 0.75},
	{Op: bench.MightContain, Subject: "mitzbloom", Reference: "bits-and-blooms", Limit: 0.75},
	{Op: bench.Put, Subject: "mitzbloom", Reference: guava, Limit: 0.5},
	{Op: bench.MightContain, Subject: "mitzbloom", Reference: guava, Limit: 0.5},
	{Op: bench.Put, Subject: "mitzbloom", Reference: "blobloom", Limit: 2, Sizes: func(n int64) bool { return n <= 1e6 }},
	{Op: bench.MightContain, Subject: "mitzbloom", Reference: "blobloom", Limit: 2, Sizes: func(n int64) bool { return n <= 1e6 }},
	{Op: bench.MightContain, Subject: "mitzbloom-batch", Reference: "blobloom", Limit: 1.5, Sizes: func(n int64) bool { return n >= 1e8 }},
	// The Put targets again for filters made with WithUnsynchronizedWrites,
	// which write as bits-and-blooms and blobloom do: plainly, for one
	// goroutine.
	{Op: bench.Put, Subject: "mitzbloom-unsync", Reference: "bits-and-blooms", Limit: 0.75},
	{Op: bench.Put, Subject: "mitzbloom-unsync", Reference: guava, Limit: 0.5},
	{Op: bench.Put, Subject: "mitzbloom-unsync", Reference: "blobloom", Limit: 2, Sizes: func(n int64) bool { return n <= 1e6 }},
}

// A check is a target applied to one key type and size.
type check struct {
	Target        target
	Key           string
	N             int64
	Subject, Ref  *Result
	Ratio         float64
	Pass, Missing bool
}

func (r *Report) checks() []check {
	var cs []check
	for _, t := range targets {
		for _, key := range r.keys() {
			for _, n := range r.Settings.Sizes {
				if t.Sizes != nil && !t.Sizes(n) {
					continue
				}
				c := check{Target: t, Key: key, N: n,
					Subject: r.result(t.Op, key, n, t.Subject), Ref: r.result(t.Op, key, n, t.Reference)}
				if c.Subject == nil || c.Ref == nil || c.Ref.NsPerOp <= 0 {
					c.Missing = true
				} else {
					c.Ratio = c.Subject.NsPerOp / c.Ref.NsPerOp
					c.Pass = c.Ratio <= t.Limit
				}
				cs = append(cs, c)
			}
		}
	}
	return cs
}

// allocating returns the mitzbloom benchmarks that allocated.
func (r *Report) allocating() []string {
	var bad []string
	for _, res := range r.Results {
		if strings.HasPrefix(res.Contender, "mitzbloom") && res.AllocsPerOp != 0 {
			bad = append(bad, fmt.Sprintf("%s/%s (%.0f allocs/op)", res.Op, bench.SubName(res.N, res.Key, res.Contender), res.AllocsPerOp))
		}
	}
	return bad
}

func (r *Report) targetsTable(w io.Writer) {
	fmt.Fprintf(w, "\n## Speed targets of issue 3\n\n")
	fmt.Fprintf(w, "Ratios of this one run. The targets are judged on medians of at least 5 runs (benchstat on the .txt file of a full run).\n\n")
	fmt.Fprintf(w, "| target | keys | n | mitzbloom ns | reference ns | ratio | |\n|---|---|---|---:|---:|---:|---|\n")
	for _, c := range r.checks() {
		t := c.Target
		name := fmt.Sprintf("%s %s ≤ %g × %s", t.Subject, t.Op, t.Limit, t.Reference)
		if c.Missing {
			fmt.Fprintf(w, "| %s | %s | %s | | | | not measured |\n", name, c.Key, bench.SizeName(c.N))
			continue
		}
		verdict := "pass"
		if !c.Pass {
			verdict = "**FAIL**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.1f | %.1f | %.2f | %s |\n", name, c.Key, bench.SizeName(c.N), c.Subject.NsPerOp, c.Ref.NsPerOp, c.Ratio, verdict)
	}
	if bad := r.allocating(); len(bad) > 0 {
		fmt.Fprintf(w, "| 0 allocs/op everywhere | | | | | | **FAIL**: %s |\n", strings.Join(bad, ", "))
	} else {
		fmt.Fprintf(w, "| 0 allocs/op everywhere | all | all | | | | pass |\n")
	}
}
