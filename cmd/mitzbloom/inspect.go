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
		f, err := openFile(e, name, funnel.Bytes, *maxBytes, true)
		if err != nil {
			status = e.fail("inspect", err)
			continue
		}
		r := newReport(displayName(name), f, ps)
		if err := f.close(); err != nil {
			status = e.fail("inspect", fmt.Errorf("%s: %w", displayName(name), err))
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

// newReport describes f, the file name. Each filter's bits are counted
// once, and its statistics computed from the count, as the library's are.
func newReport(name string, f *file[[]byte], ps []float64) report {
	r := report{File: name, Kind: "filter"}
	switch f.kind {
	case oneFilter:
		var count int64
		if f.mapped != nil {
			count = f.mapped.BitCount()
		} else {
			count = f.filter.BitCount()
		}
		r.filterReport = describeFilter(f.parts[0], count, ps)
	case rotatingSnapshot:
		r.Kind = "rotating"
		st := f.rotating.Stats()
		for i, g := range []bloom.GenerationStats{st.Current, st.Previous} {
			r.Generations = append(r.Generations, describeFilter(f.parts[i], bitCount(g.FillRatio, f.parts[i]), ps))
		}
		// A Rotating answers from either generation: its element count is
		// that of their union, and its false-positive probability that of
		// either answering, as Rotating.Stats computes them.
		r.filterReport = describeFilter(f.parts[0], bitCount(st.FillRatio, f.parts[0]), nil)
		r.Sizings = r.Generations[0].Sizings
		r.ExpectedFPP = st.ExpectedFPP
	default:
		r = newScalableReport(name, f.parts, f.scalable.Stats(), ps)
	}
	return r
}

// bitCount returns the number of bits set in the filter of header h whose
// fill ratio, its bits set over its bit size, as the library's statistics
// give it, is fill. The ratio is the count over a bit size below 2³⁸,
// correctly rounded, and so the product rounds back to the count exactly.
func bitCount(fill float64, h raw.Header) int64 {
	return int64(math.Round(fill * float64(h.Words*64)))
}

// describeFilter describes the filter of header h with count bits set.
func describeFilter(h raw.Header, count int64, ps []float64) filterReport {
	bitSize, k := h.Words*64, h.NumHashFunctions
	return filterReport{
		Strategy:                h.Strategy.String(),
		StrategyOrdinal:         h.Strategy.Ordinal(),
		HashFunctions:           k,
		BitSize:                 bitSize,
		Bytes:                   h.Size(),
		BitCount:                count,
		FillRatio:               float64(count) / float64(bitSize),
		ApproximateElementCount: raw.ApproximateElementCount(count, bitSize, k),
		ExpectedFPP:             raw.ExpectedFPP(count, bitSize, k),
		Sizings:                 sizingsOf(bitSize, k, ps),
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
