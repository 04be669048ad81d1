package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// report is what inspect reports on a file, and its -json form.
type report struct {
	File string `json:"file"`
	// Kind is "filter", "rotating" for the two generations of a Rotating,
	// which Generations describes, current first, or "scalable" for the
	// stages of a Scalable, which Stages describes, oldest first.
	Kind string `json:"kind"`
	filterReport
	Generations []filterReport `json:"generations,omitempty"`
	Stages      []filterReport `json:"stages,omitempty"`
}

// filterReport describes one filter, or the union of a Rotating's
// generations.
type filterReport struct {
	Strategy                string  `json:"strategy"`
	StrategyOrdinal         int     `json:"strategyOrdinal"`
	HashFunctions           int     `json:"hashFunctions"`
	BitSize                 int64   `json:"bitSize"`
	Bytes                   int64   `json:"bytes"`
	BitCount                int64   `json:"bitCount"`
	FillRatio               float64 `json:"fillRatio"`
	ApproximateElementCount int64   `json:"approximateElementCount"`
	ExpectedFPP             float64 `json:"expectedFpp"`
	// Sizings are the arguments of Guava's create that give this bit size
	// and number of hash functions; see sizings. For a Scalable's total,
	// they are those of bloom.NewScalable that give its stages.
	Sizings []sizing `json:"sizings"`
	// scalable marks a Scalable's total, whose sizings are NewScalable's.
	scalable bool
}

func (e *env) inspect(fs *flagSet, args []string) int {
	asJSON := fs.Bool("json", false, "print one JSON object per file, on one line each")
	var extraP fppList
	fs.Var(&extraP, "p", "also look for the expected insertions that the false-positive\nprobability `P` gives (repeatable)")
	maxBytes := maxBytesFlag(fs)
	files, stop, status := fs.parse(args)
	if stop {
		return status
	}
	if len(files) == 0 {
		return fs.usageError("no FILE to inspect")
	}
	if stdinTwice(files) {
		return fs.usageError("standard input (-) can be read only once")
	}
	ps := append([]float64(nil), commonFPPs...)
	for _, p := range extraP {
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	for i, name := range files {
		// Inspect reads only bits, so any funnel will do.
		filters, err := readFilters(e, name, funnel.Bytes, *maxBytes)
		if err != nil {
			status = e.fail("inspect", err)
			continue
		}
		r, err := newReport(displayName(name), filters, ps)
		if err != nil {
			status = e.fail("inspect", err)
			continue
		}
		if *asJSON {
			b, err := json.Marshal(r)
			if err != nil {
				return e.fail("inspect", err)
			}
			fmt.Fprintf(e.stdout, "%s\n", b)
			continue
		}
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		r.writeText(e.stdout)
	}
	return status
}

func newReport(name string, filters []*bloom.Filter[[]byte], ps []float64) (report, error) {
	r := report{File: name, Kind: "filter"}
	if isScalable(filters) {
		return newScalableReport(name, filters, ps), nil
	}
	if len(filters) == 1 {
		r.filterReport = describeFilter(filters[0], ps)
		return r, nil
	}
	r.Kind = "rotating"
	for _, f := range filters {
		r.Generations = append(r.Generations, describeFilter(f, ps))
	}
	// A Rotating answers from either generation: its element count is that
	// of their union, and its false-positive probability that of either
	// answering, as Rotating.Stats computes them.
	union := filters[0].Copy()
	if err := union.PutAll(filters[1]); err != nil {
		return r, fmt.Errorf("%s: %w", name, err)
	}
	r.filterReport = describeFilter(union, nil)
	r.Sizings = r.Generations[0].Sizings
	p1, p2 := r.Generations[0].ExpectedFPP, r.Generations[1].ExpectedFPP
	r.ExpectedFPP = p1 + p2 - p1*p2 // 1 − (1−p₁)(1−p₂), with Stats' rounding
	return r, nil
}

func describeFilter(f *bloom.Filter[[]byte], ps []float64) filterReport {
	bitCount := f.BitCount()
	return filterReport{
		Strategy:                raw.Strategy(f).String(),
		StrategyOrdinal:         raw.Strategy(f).Ordinal(),
		HashFunctions:           f.NumHashFunctions(),
		BitSize:                 f.BitSize(),
		Bytes:                   serializedSize(f),
		BitCount:                bitCount,
		FillRatio:               float64(bitCount) / float64(f.BitSize()),
		ApproximateElementCount: f.ApproximateElementCount(),
		ExpectedFPP:             f.ExpectedFPP(),
		Sizings:                 sizingsOf(f.BitSize(), f.NumHashFunctions(), ps),
	}
}

func (r *report) writeText(w io.Writer) {
	if r.Kind == "scalable" {
		r.writeScalableText(w)
		return
	}
	fmt.Fprintf(w, "file:                      %s\n", r.File)
	if r.Kind == "rotating" {
		fmt.Fprintf(w, "kind:                      Rotating snapshot, 2 generations; the union:\n")
	}
	r.filterReport.writeText(w, "")
	for i, g := range r.Generations {
		fmt.Fprintf(w, "%s generation:\n", [...]string{"current", "previous"}[i])
		g.Sizings = nil // the union's, shown above
		g.writeText(w, "  ")
	}
}

func (r *filterReport) writeText(w io.Writer, indent string) {
	line := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%s%-27s%s\n", indent, label+":", fmt.Sprintf(format, args...))
	}
	line("strategy", "%s (ordinal %d)", r.Strategy, r.StrategyOrdinal)
	if r.HashFunctions > 0 { // a Scalable's total has none
		line("hash functions", "%d", r.HashFunctions)
	}
	line("bit size", "%d", r.BitSize)
	line("bytes", "%d", r.Bytes)
	line("bits set", "%d", r.BitCount)
	line("fill ratio", "%.6f", r.FillRatio)
	if r.ApproximateElementCount == math.MaxInt64 {
		line("approximate element count", "unknown: every bit is set")
	} else {
		line("approximate element count", "%d", r.ApproximateElementCount)
	}
	line("expected fpp", "%s", strconv.FormatFloat(r.ExpectedFPP, 'g', -1, 64))
	if r.Sizings == nil {
		return
	}
	call := "create(funnel, n, p)"
	if r.scalable {
		call = "bloom.NewScalable(funnel, n, p) of the default growth and tightening"
	}
	if len(r.Sizings) == 0 {
		line("created as", "no %s with a p inspect tries (add one with -p)", call)
	}
	for _, s := range r.Sizings {
		if r.scalable {
			line("created as", "bloom.NewScalable with %s", s)
		} else {
			line("created as", "%s", s)
		}
	}
}

// fppList is the value of a repeatable -p.
type fppList []float64

var _ flag.Value = (*fppList)(nil)

func (l *fppList) String() string { return fmt.Sprint(*l) }

func (l *fppList) Set(s string) error {
	p, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	if !(p > 0 && p < 1) {
		return fmt.Errorf("%v is not in (0, 1)", p)
	}
	*l = append(*l, p)
	return nil
}
