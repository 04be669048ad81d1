package bench

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// guavaSource is the Java harness, embedded so that it compiles from any
// working directory.
//
//go:embed java/GuavaBench.java
var guavaSource []byte

// Guava runs the Java harness, java/GuavaBench.java, against Guava on the
// machine's JVM.
type Guava struct {
	Java, Javac, Jar string
	// Classes is the directory GuavaBench was compiled into.
	Classes string
	// Heap is the JVM's heap size, such as "1g", which the JVM touches
	// (see [Guava.Run]).
	Heap string
}

// ErrNoJava reports that a JDK or Guava is missing.
var ErrNoJava = errors.New("bench: no JDK or no Guava")

// FindGuava looks for java and javac on PATH and for the Guava jar: the file
// the GUAVA_JAR environment variable names, or Debian's
// /usr/share/java/guava.jar. Its error wraps [ErrNoJava] and says what is
// missing and how to install it.
func FindGuava() (*Guava, error) {
	g := &Guava{Jar: os.Getenv("GUAVA_JAR"), Heap: "1g"}
	if g.Jar == "" {
		g.Jar = "/usr/share/java/guava.jar"
	}
	var missing []string
	var err error
	if g.Java, err = exec.LookPath("java"); err != nil {
		missing = append(missing, "java")
	}
	if g.Javac, err = exec.LookPath("javac"); err != nil {
		missing = append(missing, "javac")
	}
	if _, err := os.Stat(g.Jar); err != nil {
		missing = append(missing, "the Guava jar "+g.Jar+" (GUAVA_JAR names another)")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: missing %s; install the Debian packages openjdk-17-jdk-headless and libguava-java", ErrNoJava, strings.Join(missing, ", "))
	}
	return g, nil
}

// Compile compiles the harness into a new directory under dir.
func (g *Guava) Compile(ctx context.Context, dir string) error {
	src := filepath.Join(dir, "src")
	g.Classes = filepath.Join(dir, "classes")
	for _, d := range []string{src, g.Classes} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	file := filepath.Join(src, "GuavaBench.java")
	if err := os.WriteFile(file, guavaSource, 0o644); err != nil {
		return err
	}
	// -nowarn: Debian's Guava jar lacks the errorprone annotations its
	// classes refer to, which makes javac warn.
	_, err := run(ctx, g.Javac, "-nowarn", "-encoding", "UTF-8", "-cp", g.Jar, "-d", g.Classes, file)
	return err
}

// GuavaSettings are the harness's arguments.
type GuavaSettings struct {
	// Warmup is how long each JVM runs its benchmark before measuring,
	// for the JIT; Count is how many iterations it then reports, each of
	// at least Iteration of timed work.
	Warmup    time.Duration
	Count     int
	Iteration time.Duration
	Config    Config
}

// A GuavaRun is what the harness reported for one benchmark.
type GuavaRun struct {
	// JVM describes the JVM, from the harness's "#" line.
	JVM string
	// Results has one entry per measured iteration.
	Results []GuavaResult
	// Stats describes the filled filter of a MightContain run.
	Stats []Stats
}

// A GuavaResult is one measured iteration of one benchmark.
type GuavaResult struct {
	Op         Op
	Key        string
	N          int64
	NsPerOp    float64
	BytesPerOp float64
	Ops        int64
}

// Run runs the harness's benchmark of op (Put or MightContain) on a filter
// of n keys of type key ("int64" or "hostport"), in a JVM of its own.
//
// The JVM's heap has a fixed size and is backed by memory, in transparent
// huge pages where the kernel allows, before anything runs
// (-XX:+AlwaysPreTouch -XX:+UseTransparentHugePages). Otherwise the heap
// grows into memory never touched, and on a virtual machine, where a first
// touch is slow, the page faults of Guava's garbage made some runs much
// slower than others (results/choices.md has the figures).
// Huge pages also spare Guava's filter the TLB misses that mitzbloom avoids
// by asking for huge pages itself.
func (g *Guava) Run(ctx context.Context, key string, op Op, n int64, s GuavaSettings) (*GuavaRun, error) {
	out, err := g.java(ctx, "bench", key, string(op), strconv.FormatInt(n, 10),
		strconv.FormatInt(s.Warmup.Milliseconds(), 10), strconv.Itoa(s.Count), strconv.FormatInt(s.Iteration.Milliseconds(), 10),
		strconv.Itoa(s.Config.probeHalf()), strconv.Itoa(s.Config.heldOut()))
	if err != nil {
		return nil, err
	}
	return parseGuava(out)
}

// Keys runs the harness's keys mode and returns its output.
func (g *Guava) Keys(ctx context.Context) ([]byte, error) { return g.java(ctx, "keys") }

func (g *Guava) java(ctx context.Context, args ...string) ([]byte, error) {
	cp := g.Classes + string(filepath.ListSeparator) + g.Jar
	flags := []string{"-Xms" + g.Heap, "-Xmx" + g.Heap, "-XX:+AlwaysPreTouch", "-XX:+UseTransparentHugePages", "-cp", cp, "GuavaBench"}
	return run(ctx, g.Java, append(flags, args...)...)
}

func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("bench: %s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

// parseGuava parses the output of the harness's bench mode.
func parseGuava(out []byte) (*GuavaRun, error) {
	r := &GuavaRun{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		kind, fields, err := parseFields(text)
		if err != nil {
			return nil, fmt.Errorf("bench: GuavaBench output line %d: %w", line, err)
		}
		switch kind {
		case "":
		case "#":
			r.JVM = strings.TrimSpace(strings.TrimPrefix(text, "#"))
		case "result":
			res := GuavaResult{Op: Op(fields.str("op")), Key: fields.str("key"), N: fields.int("n"),
				NsPerOp: fields.float("ns_per_op"), BytesPerOp: fields.float("bytes_per_op"), Ops: fields.int("ops")}
			if fields.err != nil {
				return nil, fmt.Errorf("bench: GuavaBench output line %d: %w", line, fields.err)
			}
			r.Results = append(r.Results, res)
		case "stats":
			st := Stats{N: fields.int("n"), Bits: fields.int("bits"),
				HeldOut: int(fields.int("held_out")), FalsePositives: int(fields.int("false_positives")),
				PresentProbes: int(fields.int("present_probes")), FalseNegatives: int(fields.int("false_negatives")),
				FillSeconds: fields.float("fill_seconds")}
			st.HeapBytes = st.Bits / 8 // the bits are a long[]; the JVM's object overhead is negligible
			if fields.err != nil {
				return nil, fmt.Errorf("bench: GuavaBench output line %d: %w", line, fields.err)
			}
			r.Stats = append(r.Stats, st)
		default:
			return nil, fmt.Errorf("bench: GuavaBench output line %d: unknown record %q", line, kind)
		}
	}
	return r, sc.Err()
}

// kv holds the key=value fields of a line, and the first error in reading
// them.
type kv struct {
	m   map[string]string
	err error
}

func parseFields(line string) (kind string, f *kv, err error) {
	words := strings.Fields(line)
	if len(words) == 0 {
		return "", nil, nil
	}
	if strings.HasPrefix(words[0], "#") {
		return "#", nil, nil
	}
	f = &kv{m: map[string]string{}}
	for _, w := range words[1:] {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return "", nil, fmt.Errorf("field %q is not key=value", w)
		}
		f.m[k] = v
	}
	return words[0], f, nil
}

func (f *kv) str(k string) string {
	v, ok := f.m[k]
	if !ok && f.err == nil {
		f.err = fmt.Errorf("no field %s", k)
	}
	return v
}

func (f *kv) int(k string) int64 {
	v, err := strconv.ParseInt(f.str(k), 10, 64)
	if err != nil && f.err == nil {
		f.err = fmt.Errorf("field %s: %w", k, err)
	}
	return v
}

func (f *kv) float(k string) float64 {
	v, err := strconv.ParseFloat(f.str(k), 64)
	if err != nil && f.err == nil {
		f.err = fmt.Errorf("field %s: %w", k, err)
	}
	return v
}

// Version returns the Bundle-Version of the Guava jar's manifest, such as
// "31.1.0.jre", or "unknown".
func (g *Guava) Version() string {
	z, err := zip.OpenReader(g.Jar)
	if err != nil {
		return "unknown"
	}
	defer z.Close()
	f, err := z.Open("META-INF/MANIFEST.MF")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Bundle-Version:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// JavaVersion returns the first line java -version prints, such as
// `openjdk version "17.0.15" 2025-04-15`.
func (g *Guava) JavaVersion(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, g.Java, "-version").CombinedOutput()
	if err != nil {
		return "unknown"
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(first)
}
