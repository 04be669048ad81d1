// Serial times how long a filter file takes to load in a new process, and
// to write, against the speed of the bytes themselves: in one run, for each
// size, it writes a filter file of int64 keys with random bits (about half
// set, as in a full filter), reads it once so that it is in the page cache,
// then runs each operation in a process of its own, the operations in turn,
// round after round, and reports each operation's median time and its
// median ratio, round by round, to the operation it is held to:
//
//   - bloom.ReadFrom of the file, ReadFrom through a bufio.Reader (a stream
//     of unknown size), ReadFromLimit, and UnmarshalBinary of its bytes,
//     each against os.ReadFile of the file;
//   - Guava's BloomFilter.readFrom of the file on the JVM, against ReadFrom;
//   - WriteTo(io.Discard), against a copy of the same bytes into memory
//     already touched; MarshalBinary, against os.ReadFile in a process that
//     holds the filter too, as MarshalBinary's does; Guava's writeTo to a
//     null stream, against WriteTo;
//   - mapped.Open of the file, and of a file of -open bytes, whose time
//     does not grow with the file's size.
//
// Each operation is timed inside its process, without the process's start;
// the report also gives the longest time the garbage collector waited to
// stop the world during it, which a copy that cannot be preempted would
// make long.
//
//	go -C bench run ./cmd/serial                                 # 64 MiB and 1 GiB, 5 rounds
//	go -C bench run ./cmd/serial -sizes 64MiB -rounds 3 -nojava
//
// The files go to -dir (default the system's temporary directory) and are
// removed at the end. Run it on an otherwise idle machine: the load
// average is printed before and after.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mitzbloom/mitzbloom/bench"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("serial: ")
	child := flag.String("child", "", "run one operation on -file and print its timing (used by serial itself)")
	file := flag.String("file", "", "the filter file of -child")
	sizes := flag.String("sizes", "64MiB,1GiB", "comma-separated sizes of the filters' bits")
	openSize := flag.String("open", "4GiB", "the size of the filter that mapped.Open also opens, 0 for none")
	rounds := flag.Int("rounds", 5, "rounds of every operation")
	dir := flag.String("dir", os.TempDir(), "where the filter files go")
	nojava := flag.Bool("nojava", false, "leave Guava out")
	flag.Parse()
	if *child != "" {
		if err := runChild(*child, *file); err != nil {
			log.Fatal(err)
		}
		return
	}
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	var guava *bench.Guava
	if !*nojava {
		if guava, err = bench.FindGuava(); err != nil {
			log.Printf("Guava left out: %v", err)
		} else if err := guava.Compile(context.Background(), mustTemp(*dir)); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("load average before: %s\n\n", bench.LoadAverage())
	for _, s := range strings.Split(*sizes, ",") {
		size, err := parseSize(s)
		if err != nil {
			log.Fatal(err)
		}
		path, err := writeFilter(*dir, size)
		if err != nil {
			log.Fatal(err)
		}
		r := &runner{self: self, guava: guava, path: path, size: size}
		r.measure(*rounds)
		r.report()
		os.Remove(path)
	}
	if *openSize != "0" {
		size, err := parseSize(*openSize)
		if err != nil {
			log.Fatal(err)
		}
		path, err := writeFilter(*dir, size)
		if err != nil {
			log.Fatal(err)
		}
		tool, err := buildTool(*dir)
		if err != nil {
			log.Fatal(err)
		}
		r := &runner{self: self, tool: tool, path: path, size: size, ops: []string{opMappedOpen, opMappedQuery, opReadFile, opQuery, opInspect}}
		r.measure(*rounds)
		r.report()
		if err := measureResident(self, path); err != nil {
			log.Fatal(err)
		}
		os.Remove(path)
		os.RemoveAll(filepath.Dir(tool))
	}
	fmt.Printf("load average after: %s\n", bench.LoadAverage())
}

// buildTool builds the command-line tool into a new directory under dir.
func buildTool(dir string) (string, error) {
	d, err := os.MkdirTemp(dir, "serial-tool-")
	if err != nil {
		return "", err
	}
	tool := filepath.Join(d, "mitzbloom")
	out, err := exec.Command("go", "build", "-o", tool, "github.com/mitzbloom/mitzbloom/cmd/mitzbloom").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return tool, nil
}

func mustTemp(dir string) string {
	d, err := os.MkdirTemp(dir, "serial-java-")
	if err != nil {
		log.Fatal(err)
	}
	return d
}

// parseSize parses a size such as "64MiB" or "1GiB", a multiple of 8
// bytes.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if rest, ok := strings.CutSuffix(s, suffix); ok {
			s, mult = rest, m
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n*mult%8 != 0 {
		return 0, fmt.Errorf("-sizes: %q is not a positive number of bytes, a multiple of 8, such as 64MiB", s)
	}
	return n * mult, nil
}

// writeFilter writes a filter of size bytes of random bits, about half of
// them set, with 7 hash functions, and reads it back once so that it is in
// the page cache, as a service's filter file is when it restarts.
func writeFilter(dir string, size int64) (string, error) {
	f, err := os.CreateTemp(dir, "serial-*.bin")
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	words := size / 8
	w.Write(binary.BigEndian.AppendUint32([]byte{1, 7}, uint32(words)))
	var b [8]byte
	for i := range uint64(words) {
		binary.BigEndian.PutUint64(b[:], bench.Uint64(i))
		w.Write(b[:])
	}
	if err := w.Flush(); err != nil {
		return "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	if _, err := io.Copy(io.Discard, f); err != nil {
		return "", err
	}
	return f.Name(), f.Close()
}

// A runner measures the operations on one file.
type runner struct {
	self  string
	tool  string // the command-line tool, for opQuery and opInspect
	guava *bench.Guava
	path  string
	size  int64
	ops   []string
	// times holds each operation's timings, a round at a time.
	times map[string][]timing
}

// goOps are the operations of package bloom, in the order of a round.
var goOps = []string{opReadFile, opReadFrom, opReadBufio, opReadLimit, opUnmarshal, opMarshal, opReadFileLoaded, opWriteTo, opCopy, opMappedOpen}

// measure runs every operation rounds times, in turn, each in a process of
// its own; each round starts at the next operation, so that none always
// follows the same one.
func (r *runner) measure(rounds int) {
	if r.ops == nil {
		r.ops = slices.Clone(goOps)
		if r.guava != nil {
			r.ops = append(r.ops, opGuavaRead, opGuavaWrite)
		}
	}
	r.times = map[string][]timing{}
	for round := range rounds {
		for i := range r.ops {
			op := r.ops[(round+i)%len(r.ops)]
			t, err := r.run(op)
			if err != nil {
				log.Fatalf("%s of %s: %v", op, sizeName(r.size), err)
			}
			r.times[op] = append(r.times[op], t)
		}
	}
}

// run times op once, in a new process.
func (r *runner) run(op string) (timing, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	switch op {
	case opQuery:
		// Exit status 1 says a key is absent.
		cmd = exec.CommandContext(ctx, r.tool, "query", "-funnel", "long", r.path, "1", "2", "3")
	case opInspect:
		cmd = exec.CommandContext(ctx, r.tool, "inspect", r.path)
	case opGuavaRead, opGuavaWrite:
		arg := map[string]string{opGuavaRead: "readfrom", opGuavaWrite: "writeto"}[op]
		// A heap that holds the filter twice over, touched before the
		// run (see bench.Guava.Run): Guava's fastest form.
		heap := strconv.FormatInt(2*r.size>>20+1024, 10) + "m"
		cp := r.guava.Classes + string(filepath.ListSeparator) + r.guava.Jar
		cmd = exec.CommandContext(ctx, r.guava.Java, "-Xms"+heap, "-Xmx"+heap, "-XX:+AlwaysPreTouch", "-XX:+UseTransparentHugePages",
			"-cp", cp, "GuavaBench", arg, r.path)
	default:
		cmd = exec.CommandContext(ctx, r.self, "-child", op, "-file", r.path)
	}
	cmd.Stderr = os.Stderr
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start).Seconds()
	if op == opQuery || op == opInspect {
		if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() == 1 && op == opQuery {
			err = nil
		}
		return timing{seconds: wall, wall: wall}, err
	}
	if err != nil {
		return timing{}, err
	}
	line := strings.TrimSpace(string(out))
	if _, rest, ok := strings.Cut(line, "seconds="); ok && strings.HasPrefix(line, "serial ") {
		// GuavaBench: "serial op=readfrom seconds=1.23 count=…".
		secs, _, _ := strings.Cut(rest, " ")
		line = "seconds=" + secs + " stopping=0"
	}
	t, err := parseTiming(line)
	t.wall = wall
	return t, err
}

// A comparison is an operation held to another, with the ratio it should
// reach: its speed over the other's (the other's time over its own) at
// least min.
type comparison struct {
	op, base string
	min      float64
	what     string
}

var comparisons = []comparison{
	{opReadFrom, opReadFile, 0.5, "≥ 0.5 × os.ReadFile's speed"},
	{opReadBufio, opReadFile, 0, "(a stream of unknown size)"},
	{opReadLimit, opReadFile, 0.5, "≥ 0.5 × os.ReadFile's speed"},
	{opUnmarshal, opReadFile, 0.5, "≥ 0.5 × os.ReadFile's speed"},
	{opGuavaRead, opReadFrom, 0, "(Guava's speed over ReadFrom's: below 1, ReadFrom is faster)"},
	{opWriteTo, opCopy, 0.5, "≥ 0.5 × a copy's speed"},
	{opMarshal, opReadFileLoaded, 1, "≥ 1 × os.ReadFile's speed, both in a process that holds the filter"},
	{opMarshal, opReadFile, 0, "(os.ReadFile in a process of its own)"},
	{opGuavaWrite, opWriteTo, 0, "(Guava's speed over WriteTo's)"},
	{opMappedOpen, opReadFile, 0, "(opening in place against reading the file)"},
	{opMappedQuery, opReadFile, 0, "(opening in place and 10 lookups, against reading the file)"},
}

// wallComparisons hold whole processes to each other, start-up included.
var wallComparisons = []comparison{
	{opInspect, opReadFile, 0, "(inspect, whole process, against a process that reads the file)"},
	{opQuery, opReadFile, 0, "(query of 3 keys, whole process, against a process that reads the file)"},
}

// report prints the medians and ranges of the operations' times and of the
// ratios, round by round.
func (r *runner) report() {
	fmt.Printf("### A filter of %s (%d bytes), %d rounds\n\n", sizeName(r.size), r.size+6, len(r.times[r.ops[0]]))
	fmt.Println("| operation | seconds, median (range) | GB/s | whole process, seconds | longest stop for the GC |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, op := range r.ops {
		ts := r.times[op]
		secs, walls := make([]float64, len(ts)), make([]float64, len(ts))
		stop := 0.0
		for i, t := range ts {
			secs[i], walls[i] = t.seconds, t.wall
			stop = max(stop, t.stopping)
		}
		stopText := "—"
		if stop > 0 {
			stopText = fmt.Sprintf("≤ %.2g ms", stop*1e3)
		}
		fmt.Printf("| %s | %.3g (%.3g–%.3g) | %.2f | %.3g (%.3g–%.3g) | %s |\n", op, bench.Median(secs), slices.Min(secs), slices.Max(secs),
			float64(r.size)/bench.Median(secs)/1e9, bench.Median(walls), slices.Min(walls), slices.Max(walls), stopText)
	}
	fmt.Println()
	fmt.Println("| speed of | over the speed of | median (range), round by round | target |")
	fmt.Println("|---|---|---:|---|")
	for _, c := range slices.Concat(comparisons, wallComparisons) {
		a, b := r.times[c.op], r.times[c.base]
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		wall := slices.Contains(wallComparisons, c)
		ratios := make([]float64, min(len(a), len(b)))
		for i := range ratios {
			if wall {
				ratios[i] = b[i].wall / a[i].wall
			} else {
				ratios[i] = b[i].seconds / a[i].seconds
			}
		}
		m := bench.Median(ratios)
		target := c.what
		if c.min > 0 {
			verdict := "met"
			if m < c.min {
				verdict = "NOT met"
			}
			target += ": " + verdict
		}
		fmt.Printf("| %s | %s | %.2f (%.2f–%.2f) | %s |\n", c.op, c.base, m, slices.Min(ratios), slices.Max(ratios), target)
	}
	fmt.Println()
}

func sizeName(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
