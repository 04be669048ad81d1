package main

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
)

func (e *env) merge(fs *flagSet, args []string) int {
	out := fs.String("o", "", "write the merged filter to `OUT`, replacing it only once the merge succeeds\n(-: standard output)")
	maxBytes := maxBytesFlag(fs)
	force := fs.Bool("force", false, "write the merged filter even if its expected false-positive probability\nis more than twice the P its filters were built with, with a warning")
	files, stop, status := fs.parse(args)
	if stop {
		return status
	}
	switch {
	case *out == "":
		return fs.usageError("-o OUT is required")
	case len(files) < 2:
		return fs.usageError("merge needs at least two filters, A and B")
	case stdinTwice(files):
		return fs.usageError("standard input (-) can be read only once")
	}
	merged, err := e.mergeFiles(files, *maxBytes)
	if err != nil {
		return e.fail("merge", err)
	}
	if !e.loadOK("merge", mergedLoad(merged), *force) {
		return exitError
	}
	if err := e.writeOutput(*out, merged); err != nil {
		return e.fail("merge", err)
	}
	return exitOK
}

// mergedLoad is what the merged filter f holds, by Guava's estimate,
// against the -n and -p of build that give a filter its size and number of
// hash functions, as inspect works them out for the p it tries: for the
// largest such p, to refuse only a filter over twice each. For another p
// it is the largest p that gives k hash functions, 2^(½−k), since Guava's k
// is −log₂ p rounded, and the n that p sizes the filter for.
func mergedLoad(f *bloom.Filter[[]byte]) load {
	keys := f.ApproximateElementCount()
	l := load{keys: "about " + strconv.FormatInt(keys, 10), n: keys, use: "build the filters with",
		pName: "p", fpp: f.ExpectedFPP()}
	var n int64
	if s := sizingsOf(f.BitSize(), f.NumHashFunctions(), commonFPPs); len(s) > 0 {
		largest := slices.MaxFunc(s, func(a, b sizing) int { return cmp.Compare(a.FPP, b.FPP) })
		l.p, n = largest.FPP, largest.MaxInsertions
		l.sizedFor = "n " + strconv.FormatInt(largest.MinInsertions, 10)
		if largest.MaxInsertions > largest.MinInsertions {
			l.sizedFor += "-" + strconv.FormatInt(largest.MaxInsertions, 10)
		}
	} else {
		k := float64(f.NumHashFunctions())
		l.p = math.Pow(2, 0.5-k)
		n = int64(float64(f.BitSize()) * math.Ln2 / (k - 0.5)) // m·ln²2 / −ln p
		l.sizedFor = "about " + strconv.FormatInt(n, 10)
	}
	// A saturated filter's estimate is math.MaxInt64, no -n at all.
	l.fits = keys > n && keys < math.MaxInt64
	return l
}

// mergeFiles puts every filter of names into the first, as Guava's
// a.putAll(b) does for each b.
func (e *env) mergeFiles(names []string, maxBytes int64) (*bloom.Filter[[]byte], error) {
	var merged *bloom.Filter[[]byte]
	for _, name := range names {
		// The files do not record their funnels; one for all of them
		// makes PutAll's funnel check pass, as Guava's does for filters
		// of one funnel.
		f, err := openFile(e, name, funnel.Bytes, maxBytes, false)
		switch {
		case err != nil:
			return nil, err
		case f.kind == scalableStages:
			return nil, fmt.Errorf("%s: a Scalable's stages, not a filter; merge merges filters", displayName(name))
		case f.kind == rotatingSnapshot:
			return nil, fmt.Errorf("%s: a Rotating snapshot, not a filter; merge merges filters", displayName(name))
		case merged == nil:
			merged = f.filter
			continue
		}
		if err := merged.PutAll(f.filter); err != nil {
			return nil, fmt.Errorf("%s: cannot merge into %s: %s%s",
				displayName(name), displayName(names[0]), guavaMessage(err), mergeHint(merged, f.filter))
		}
	}
	return merged, nil
}

// guavaMessage returns the message of the exception Guava's putAll throws
// where PutAll returned err, so that the words match those in the logs of a
// Java service: PutAll runs Guava's checks in Guava's order, and says
// "filters" where Guava says "BloomFilters".
func guavaMessage(err error) string {
	msg := err.Error()
	if errors.Is(err, bloom.ErrIncompatible) {
		if _, rest, ok := strings.Cut(msg, ": filters must "); ok {
			return "BloomFilters must " + rest
		}
	}
	return msg
}

// mergeHint says how to build filters a and b so that they merge, after the
// message of PutAll's error.
func mergeHint(a, b *bloom.Filter[[]byte]) string {
	switch {
	case a.BitSize() != b.BitSize():
		return "; build both with the same -n and -p"
	case a.NumHashFunctions() != b.NumHashFunctions():
		return "; build both with the same -n and -p, and -legacy-k for both or neither"
	case raw.Strategy(a) != raw.Strategy(b):
		return "; build both with the same -strategy"
	}
	return ""
}
