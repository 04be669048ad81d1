package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mitzbloom/mitzbloom/bench"
)

// A comparison is a ratio the report tabulates: a mitzbloom contender's
// time per key over a peer's for one operation, below 1 where mitzbloom is
// faster.
type comparison struct {
	Op      bench.Op
	Subject string // a mitzbloom contender
	Peer    string
}

var comparisons = []comparison{
	{bench.Put, "mitzbloom", "bits-and-blooms"},
	{bench.Put, "mitzbloom", "blobloom"},
	{bench.Put, "mitzbloom", guava},
	// Filters filled through a bloom.Builder write as bits-and-blooms
	// and blobloom do: plainly, for one goroutine.
	{bench.Put, "mitzbloom-unsync", "bits-and-blooms"},
	{bench.Put, "mitzbloom-unsync", "blobloom"},
	{bench.MightContain, "mitzbloom", "bits-and-blooms"},
	{bench.MightContain, "mitzbloom", "blobloom"},
	{bench.MightContain, "mitzbloom", guava},
	{bench.MightContain, "mitzbloom-batch", "blobloom"},
}

// ratio returns c's ratio for key and n, and false where either side was
// not measured.
func (r *Report) ratio(c comparison, key string, n int64) (float64, bool) {
	s, p := r.result(c.Op, key, n, c.Subject), r.result(c.Op, key, n, c.Peer)
	if s == nil || p == nil || p.NsPerOp <= 0 {
		return 0, false
	}
	return s.NsPerOp / p.NsPerOp, true
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

// ratiosTable writes every comparison for every key type and size, and
// whether mitzbloom allocated anywhere.
func (r *Report) ratiosTable(w io.Writer) {
	fmt.Fprintf(w, "\n## Ratios to the peers\n\n")
	fmt.Fprintf(w, "mitzbloom's time per key over the peer's, in this run (below 1: mitzbloom is faster).\n\n")
	fmt.Fprintf(w, "| operation | mitzbloom ÷ peer |")
	sep := "|---|---|"
	for _, key := range r.keys() {
		for _, n := range r.Settings.Sizes {
			fmt.Fprintf(w, " %s %s |", key, bench.SizeName(n))
			sep += "---:|"
		}
	}
	fmt.Fprintf(w, "\n%s\n", sep)
	for _, c := range comparisons {
		fmt.Fprintf(w, "| %s | %s ÷ %s |", c.Op, c.Subject, c.Peer)
		for _, key := range r.keys() {
			for _, n := range r.Settings.Sizes {
				if x, ok := r.ratio(c, key, n); ok {
					fmt.Fprintf(w, " %.2f |", x)
				} else {
					fmt.Fprintf(w, " – |")
				}
			}
		}
		fmt.Fprintln(w)
	}
	if bad := r.allocating(); len(bad) > 0 {
		fmt.Fprintf(w, "\nmitzbloom allocated in: %s.\n", strings.Join(bad, ", "))
	} else {
		fmt.Fprintf(w, "\nmitzbloom allocated nothing in any benchmark.\n")
	}
}
