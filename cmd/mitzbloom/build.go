package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// maxBadReports bounds the bad lines build reports one by one; it counts
// the rest.
const maxBadReports = 10

// errBadLines reports input lines that do not parse as keys.
var errBadLines = errors.New("bad lines")

// A builder is one run of build: its flags, and what it found.
type builder struct {
	e *env
	n int64
	// countLines says that n is to be the number of lines of the inputs.
	countLines bool
	p          float64
	scalable   bool // build a bloom.Scalable whose first stage is sized for n
	opts       []bloom.Option
	inputs     []string // "-" is standard input
	skipBad    bool
	progress   *progress

	bad    int64 // lines skipped
	keys   int64 // keys put
	filter io.WriterTo
	fpp    float64 // the filter's expected false-positive probability
}

func (e *env) build(fs *flagSet, args []string) int {
	n := fs.Int64("n", 0, "the expected number of keys `N`, as Guava's create takes it\n(without -n: the number of lines of the INPUT files; with -scalable,\nthe first stage's, 1000 without -n)")
	p := fs.Float64("p", 0, "the false-positive probability `P` once N keys are in, in (0, 1); required")
	funnelName := fs.String("funnel", "string", "how a line becomes a key: `F` is one of\n"+funnelNames())
	strategyName := fs.String("strategy", "mitz64", "Guava's strategy `S`: mitz64, MURMUR128_MITZ_64 (its default), or\nmitz32, MURMUR128_MITZ_32")
	legacyK := fs.Bool("legacy-k", false, "compute the number of hash functions as Guava 31.x and earlier do")
	out := fs.String("o", "", "write the filter to `FILE`, replacing it only once the build succeeds\n(without -o, or -: standard output)")
	skipBad := fs.Bool("skip-bad", false, "skip lines that are not keys of the funnel, and count them, instead of\nfailing")
	force := fs.Bool("force", false, "write the filter even if its expected false-positive probability is\nmore than twice P, with a warning")
	quiet := fs.Bool("q", false, "print no progress")
	scalable := fs.Bool("scalable", false, "write a bloom.Scalable, which grows as keys come so that its\nfalse-positive probability stays below P however many there are")
	inputs, stop, status := fs.parse(args)
	if stop {
		return status
	}
	switch {
	case !fs.isSet("p"):
		return fs.usageError("-p P is required: the false-positive probability, in (0, 1)")
	case !(*p > 0 && *p < 1):
		return fs.usageError("-p must be in (0, 1), not %v", *p)
	case *n < 0:
		return fs.usageError("-n must be >= 0, not %d", *n)
	}
	k, err := keysFor(*funnelName)
	if err != nil {
		return fs.usageError("%v", err)
	}
	b := &builder{e: e, n: *n, countLines: !fs.isSet("n") && !*scalable, p: *p, scalable: *scalable, inputs: inputs, skipBad: *skipBad}
	if *scalable && !fs.isSet("n") {
		b.n = defaultScalableN
	}
	if len(b.inputs) == 0 {
		b.inputs = []string{"-"}
	}
	if stdinTwice(b.inputs) {
		return fs.usageError("standard input (-) can be read only once")
	}
	if b.countLines && slices.Contains(b.inputs, "-") {
		return fs.usageError("-n N is required when the keys come from standard input, whose lines cannot be counted first")
	}
	switch *strategyName {
	case "mitz64":
		b.opts = append(b.opts, bloom.WithStrategy(strategy.Murmur128Mitz64))
	case "mitz32":
		b.opts = append(b.opts, bloom.WithStrategy(strategy.Murmur128Mitz32))
	default:
		return fs.usageError("unknown strategy %q: want mitz64 or mitz32", *strategyName)
	}
	if *legacyK {
		b.opts = append(b.opts, bloom.WithLegacyHashCount())
	}
	if !*quiet && isTerminal(e.stderr) {
		b.progress = startProgress(e.stderr, inputsSize(b.inputs))
	}

	err = k.build(b)
	b.progress.stop()
	if err != nil {
		return e.fail("build", err)
	}
	if b.bad > 0 {
		fmt.Fprintf(e.stderr, "mitzbloom build: skipped %d bad lines\n", b.bad)
	}
	if !e.loadOK("build", b.load(), *force) {
		return exitError
	}
	if err := e.writeOutput(*out, b.filter); err != nil {
		return e.fail("build", err)
	}
	return exitOK
}

// load is what the built filter holds against what it was sized for.
func (b *builder) load() load {
	return load{keys: strconv.FormatInt(b.keys, 10), n: b.keys, fits: b.keys > b.n, use: "use",
		sizedFor: strconv.FormatInt(b.n, 10), p: b.p, pName: "-p", fpp: b.fpp}
}

// A load is what a finished filter holds against what it was sized for,
// which build and merge check before they write it.
type load struct {
	keys     string  // the keys it holds, as the message says it
	n        int64   // the -n that fits them, if fits
	fits     bool    // whether n fits them, and not only a larger one
	use      string  // what to do with the -n that fits
	sizedFor string  // the n it was sized for, as the message says it
	p        float64 // the false-positive probability it was sized for
	pName    string  // how the message names p
	fpp      float64 // its expected false-positive probability
}

// loadOK reports whether command may write the filter of l: yes if its
// expected false-positive probability is at most twice p, the one asked
// for, and otherwise only with force, after a warning. When it may not, it
// says why.
func (e *env) loadOK(command string, l load, force bool) bool {
	if l.fpp <= 2*l.p {
		return true
	}
	if !force {
		fmt.Fprintf(e.stderr, "mitzbloom %s: nothing written: %s, or -force to write it anyway\n", command, l)
		return false
	}
	fmt.Fprintf(e.stderr, "mitzbloom %s: warning: %s\n", command, l)
	return true
}

// String describes an overfull filter, and the -n to build it with instead.
func (l load) String() string {
	msg := fmt.Sprintf("%s keys in a filter sized for %s: expected false-positive probability %s, more than twice %s %s",
		l.keys, l.sizedFor, formatFPP(l.fpp), l.pName, strconv.FormatFloat(l.p, 'g', -1, 64))
	// More keys than n make a filter saturate; sized for all of them, it
	// has about the probability asked for.
	if l.fits {
		return msg + fmt.Sprintf("; %s -n %d", l.use, l.n)
	}
	return msg + "; " + l.use + " a larger -n"
}

// formatFPP formats a false-positive probability with three significant
// digits, enough to compare it with the one asked for.
func formatFPP(p float64) string { return strconv.FormatFloat(p, 'g', 3, 64) }

func (k keyKind[T]) build(b *builder) error {
	if b.scalable {
		return k.buildScalable(b)
	}
	if b.countLines {
		n, err := b.countInputLines()
		if err != nil {
			return err
		}
		b.n = n
	}
	// One goroutine fills the filter, so it needs no atomic writes.
	builder, err := bloom.NewBuilder(k.funnel, b.n, b.p, b.opts...)
	if err != nil {
		return err
	}
	if err := k.fill(b, builder.PutMany); err != nil {
		return err
	}
	filter := builder.Filter()
	b.filter, b.fpp = filter, filter.ExpectedFPP()
	return nil
}

// fill reads the keys of b's inputs and puts them with putMany.
func (k keyKind[T]) fill(b *builder, putMany func([]T)) error {
	// Reading, splitting and parsing run in one goroutine and PutMany in
	// this one, so that on two cores the input costs little more than the
	// hashing. Two batches take turns: one is filled while the other is
	// put.
	full := make(chan *batch[T])
	free := make(chan *batch[T], 2)
	free <- new(batch[T])
	free <- new(batch[T])
	var readErr error
	go func() {
		defer close(full)
		readErr = k.read(b, free, full)
	}()
	for bt := range full {
		putMany(bt.keys)
		b.keys += int64(len(bt.keys))
		b.progress.add(bt.nlines, int64(bt.bytes))
		free <- bt
	}
	return readErr
}

// A batch is the keys of one chunk of input, and what they took.
type batch[T any] struct {
	keys  []T
	lines []string // the lines of the keys, when they must be parsed
	bytes int
	// nlines counts the lines of the chunk, bad ones included.
	nlines int64
}

// read reads the inputs of b into batches taken from free, and sends each
// to full. It reports bad lines in its error, once all are read, unless
// b.skipBad is set: then it counts them in b.bad.
func (k keyKind[T]) read(b *builder, free chan *batch[T], full chan<- *batch[T]) error {
	var bad []string
	for _, name := range b.inputs {
		r, closeInput, err := b.e.open(name)
		if err != nil {
			return err
		}
		lr := newLineReader(r)
		for {
			bt := <-free
			if k.parse == nil {
				// The lines are the keys: no copy.
				var lines []string
				lines, _, bt.bytes, err = lr.next(any(bt.keys[:0]).([]string))
				bt.keys, bt.nlines = any(lines).([]T), int64(len(lines))
			} else {
				var first int64
				bt.lines, first, bt.bytes, err = lr.next(bt.lines[:0])
				bt.keys, bt.nlines = bt.keys[:0], int64(len(bt.lines))
				for i, line := range bt.lines {
					v, err := k.parse(line)
					if err != nil {
						b.bad++
						if !b.skipBad && len(bad) < maxBadReports {
							bad = append(bad, fmt.Sprintf("%s:%d: %s: %v", displayName(name), first+int64(i), quoteLine(line), err))
						}
						continue
					}
					bt.keys = append(bt.keys, v)
				}
			}
			if errors.Is(err, io.EOF) {
				free <- bt // there is room: only two batches exist
				break
			}
			if err != nil {
				closeInput()
				return fmt.Errorf("%s: %w", displayName(name), err)
			}
			full <- bt
		}
		closeInput()
	}
	if len(bad) > 0 {
		more := ""
		if b.bad > int64(len(bad)) {
			more = fmt.Sprintf("\n... and %d more", b.bad-int64(len(bad)))
		}
		return fmt.Errorf("%w: %d lines are not %s keys (use -skip-bad to skip them):\n%s%s", errBadLines, b.bad, k.name, strings.Join(bad, "\n"), more)
	}
	return nil
}

// countInputLines counts the lines of the inputs, which must be files.
func (b *builder) countInputLines() (int64, error) {
	var total int64
	for _, name := range b.inputs {
		r, closeInput, err := b.e.open(name)
		if err != nil {
			return 0, err
		}
		n, err := countLines(r)
		closeInput()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		total += n
	}
	return total, nil
}

// inputsSize returns the total size of the inputs, or 0 if one of them is
// not a regular file, whose size cannot be known in advance.
func inputsSize(names []string) int64 {
	var total int64
	for _, name := range names {
		fi, err := os.Stat(name)
		if name == "-" || err != nil || !fi.Mode().IsRegular() {
			return 0
		}
		total += fi.Size()
	}
	return total
}
