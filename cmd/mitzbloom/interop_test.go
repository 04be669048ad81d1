package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mitzbloom/mitzbloom/internal/javatest"
)

// TestJavaInterop checks the command against the real Guava of this
// machine, which testdata/CmdInterop.java drives (its header describes the
// commands): Guava reads what build writes, with the matching funnel, and
// finds every key, in a filter equal to the one it builds from the same
// file; inspect and query agree with Guava on filters Guava wrote; and merge
// fails where Guava's putAll does, with its message. Java runs once, since
// JVM start-up dominates the runtime.
//
// Debian's Guava is 31.1, which computes k with the legacy rule, so the
// builds compared with Guava's own filters use -legacy-k.
func TestJavaInterop(t *testing.T) {
	javatest.Tools(t) // skip before building anything when Java is missing
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(0x636d64, 0x6a617661))
	const n, p = 500, 0.01
	pBits := fmt.Sprintf("%016x", math.Float64bits(p))
	var commands []string

	// Go builds, Guava reads.
	var built []string
	for _, c := range allFunnelCases {
		for _, s := range []struct {
			flag    string
			ordinal int
		}{{"mitz64", 1}, {"mitz32", 0}} {
			lines := c.randomLines(r, 400)
			for i := 0; i < len(lines); i += 5 {
				lines[i] += "\r"
			}
			name := c.kind() + "-" + s.flag
			keys := writeLines(t, dir, "go-"+name+".txt", lines)
			out := filepath.Join(dir, "go-"+name+".bin")
			mustRun(t, "", "build", "-n", strconv.Itoa(n), "-p", strconv.FormatFloat(p, 'g', -1, 64), "-legacy-k",
				"-funnel", c.kind(), "-strategy", s.flag, "-o", out, keys)
			commands = append(commands, fmt.Sprintf("check %s %d %d %s %s %s", c.kind(), s.ordinal, n, pBits, out, keys))
			built = append(built, out)
		}
	}

	// At n = 3 and p = 0.01 the k rules differ: Guava 31.1's gives 6, current
	// Guava's 7. Only -legacy-k builds Guava 31.1's filter.
	tiny := writeLines(t, dir, "go-tiny.txt", []string{"a", "b", "c"})
	tinyOut := filepath.Join(dir, "go-tiny.bin")
	mustRun(t, "", "build", "-n", "3", "-p", "0.01", "-legacy-k", "-o", tinyOut, tiny)
	commands = append(commands, fmt.Sprintf("check string 1 3 %s %s %s", pBits, tinyOut, tiny))

	// Guava writes, Go inspects and queries.
	type javaFilter struct {
		funnel, file string
		n            int64
		p            float64
		keys, probes []string
	}
	var written []javaFilter
	for i, c := range allFunnelCases {
		lines := c.randomLines(r, 1000)
		jf := javaFilter{funnel: c.kind(), file: filepath.Join(dir, "java-"+c.kind()+".bin"),
			n: int64(600 + 97*i), p: []float64{0.01, 0.03, 0.001}[i%3], keys: lines[:600], probes: lines[600:]}
		keys := writeLines(t, dir, "java-"+c.kind()+"-keys.txt", jf.keys)
		probes := writeLines(t, dir, "java-"+c.kind()+"-probes.txt", jf.probes)
		commands = append(commands, fmt.Sprintf("write %s %d %d %016x %s %s %s", c.kind(), i%2, jf.n, math.Float64bits(jf.p), jf.file, keys, probes))
		written = append(written, jf)
	}

	// Incompatible filters for Guava and merge to reject.
	buildFilter := func(name string, args ...string) string {
		out := filepath.Join(dir, name+".bin")
		mustRun(t, "x\ny\n", append([]string{"build", "-o", out}, args...)...)
		return out
	}
	base := buildFilter("base", "-n", "100", "-p", "0.01")
	incompatible := []string{
		buildFilter("other-k", "-n", "100", "-p", "0.001"),
		buildFilter("other-size", "-n", "300", "-p", "0.01"),
		buildFilter("other-strategy", "-n", "100", "-p", "0.01", "-strategy", "mitz32"),
	}
	compatible := buildFilter("compatible", "-n", "100", "-p", "0.01")
	for _, other := range append(incompatible, compatible) {
		commands = append(commands, fmt.Sprintf("merge %s %s", base, other))
	}

	commandsFile := writeLines(t, dir, "commands.txt", commands)
	out := javatest.Program(t, []string{
		filepath.Join("testdata", "CmdInterop.java"),
		filepath.Join("..", "..", "bloom", "testdata", "interop", "Interop.java"),
	}, "CmdInterop", commandsFile)
	answers := parseJavaAnswers(t, out, len(commands))

	for _, file := range built {
		a := answers["check "+file]
		if a["missing"] != "0" || a["rest"] != "0" || a["equal"] != "true" || a["keys"] != "400" {
			t.Errorf("Guava on %s: %v; want all 400 keys found, no bytes left, and a filter equal to Guava's own", filepath.Base(file), a)
		}
	}
	if a := answers["check "+tinyOut]; a["missing"] != "0" || a["equal"] != "true" {
		t.Errorf("Guava on a -legacy-k build of 3 keys at n = 3: %v; want an equal filter", a)
	}

	for _, jf := range written {
		t.Run("java-"+jf.funnel, func(t *testing.T) {
			a := answers["write "+jf.file]
			res := mustRun(t, "", "inspect", "-json", jf.file)
			var got report
			if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
				t.Fatalf("inspect -json: %v\n%s", err, res.stdout)
			}
			if strconv.FormatInt(got.BitSize, 10) != a["bitSize"] {
				t.Errorf("inspect bitSize %d, Guava's bitSize() %s", got.BitSize, a["bitSize"])
			}
			if strconv.FormatInt(got.ApproximateElementCount, 10) != a["count"] {
				t.Errorf("inspect approximateElementCount %d, Guava's %s", got.ApproximateElementCount, a["count"])
			}
			javaFPPBits, err := strconv.ParseUint(a["fpp"], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			// Java's Math.pow may differ from Go's correctly rounded power
			// in the last bit (see bloom.Filter.ExpectedFPP); no more.
			if javaFPP := math.Float64frombits(javaFPPBits); math.Abs(got.ExpectedFPP-javaFPP) > 1e-12*javaFPP {
				t.Errorf("inspect expectedFpp %v, Guava's %v", got.ExpectedFPP, javaFPP)
			}
			found := false
			for _, s := range got.Sizings {
				found = found || (s.FPP == jf.p && s.MinInsertions <= jf.n && jf.n <= s.MaxInsertions && s.HashRule != "current")
			}
			if !found {
				t.Errorf("inspect does not find Guava's create(funnel, %d, %v) among %+v", jf.n, jf.p, got.Sizings)
			}

			present := mitzbloom(t, strings.Join(jf.keys, "\n")+"\n", "query", "-funnel", jf.funnel, jf.file)
			if present.status != exitOK || strings.Count(present.stdout, "\tmaybe\n") != len(jf.keys) {
				t.Errorf("query of the keys Guava put: want all maybe and exit status 0, got status %d and %d maybe",
					present.status, strings.Count(present.stdout, "\tmaybe\n"))
			}
			absent := mitzbloom(t, strings.Join(jf.probes, "\n")+"\n", "query", "-funnel", jf.funnel, jf.file)
			var answers strings.Builder
			for _, line := range strings.Split(strings.TrimSuffix(absent.stdout, "\n"), "\n") {
				answers.WriteByte(map[bool]byte{true: '1', false: '0'}[strings.HasSuffix(line, "\tmaybe")])
			}
			if answers.String() != a["probes"] {
				t.Errorf("query answers for keys Guava did not put differ from its mightContain:\n  query %s\n  Guava %s", answers.String(), a["probes"])
			}
			if !strings.Contains(a["probes"], "0") || absent.status != exitAbsent {
				t.Errorf("query of keys not put: exit status %d, Guava's answers %s; want some absent and exit status 1", absent.status, a["probes"])
			}
		})
	}

	merged := filepath.Join(dir, "merged.bin")
	guavaMerges := mergeAnswers(t, out)
	for i, other := range append(incompatible, compatible) {
		guava := guavaMerges[i]
		res := mitzbloom(t, "", "merge", "-o", merged, base, other)
		if other == compatible {
			if guava != "ok" || res.status != exitOK {
				t.Errorf("merge of compatible filters: Guava says %q, merge %v", guava, res)
			}
			continue
		}
		if guava == "ok" || !strings.HasPrefix(guava, "BloomFilters must") {
			t.Fatalf("Guava's putAll of %s accepts it or says something unexpected: %q", filepath.Base(other), guava)
		}
		// Guava's message, then what to do about it.
		if res.status != exitError || !strings.Contains(res.stderr, ": "+guava+"; build both with the same -") {
			t.Errorf("merge of %s: want exit status 2 and Guava's %q, got %v", filepath.Base(other), guava, res)
		}
		if _, err := os.Stat(merged); !os.IsNotExist(err) {
			t.Errorf("a failed merge left %s", merged)
		}
		os.Remove(merged) // for the next case, should this one have failed
	}
}

// parseJavaAnswers maps each of CmdInterop's result lines, but merge's, by
// its first two words to its key=value fields.
func parseJavaAnswers(t *testing.T, out string, commands int) map[string]map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\r\n"), "\n")
	// The last line vouches that the output is complete.
	if last := lines[len(lines)-1]; last != fmt.Sprintf("end %d", commands) {
		t.Fatalf("CmdInterop's output is incomplete: it ends with %q", last)
	}
	answers := map[string]map[string]string{}
	for _, line := range lines[:len(lines)-1] {
		w := strings.Fields(line)
		if len(w) < 2 {
			t.Fatalf("unexpected line from CmdInterop: %q", line)
		}
		if w[0] == "merge" {
			continue
		}
		fields := map[string]string{}
		for _, f := range w[2:] {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				t.Fatalf("bad field %q in %q", f, line)
			}
			fields[k] = v
		}
		answers[w[0]+" "+w[1]] = fields
	}
	return answers
}

// mergeAnswers returns what CmdInterop said of each merge, in order: "ok",
// or the message of Guava's exception.
func mergeAnswers(t *testing.T, out string) []string {
	t.Helper()
	var answers []string
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "merge "); ok {
			_, answer, _ := strings.Cut(rest, " ")
			answers = append(answers, answer)
		}
	}
	return answers
}
