package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// TestConventions runs the command as a user would, for each case checking
// the exit status, which stream it writes to (the other stays empty), and
// the first lines there: -h prints help on standard output and succeeds; a
// usage error is one line naming the command and a hint, on standard error,
// with exit status 2; a failure names its file.
func TestConventions(t *testing.T) {
	dir := t.TempDir()
	keys := writeLines(t, dir, "keys.txt", []string{"a", "b", "10.0.0.1:443"})
	filter := filepath.Join(dir, "f.bloom")
	mustRun(t, "", "build", "-n", "1000", "-p", "0.01", "-o", filter, keys)
	filterBytes, err := os.ReadFile(filter)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.bloom")
	missing := filepath.Join(dir, "missing.txt")
	subdir := filepath.Join(dir, "adir")
	if err := os.Mkdir(subdir, 0o755); err != nil {
		t.Fatal(err)
	}
	hint := func(cmd string) string { return "Run 'mitzbloom " + cmd + " -h' for usage." }
	const mainHint = "Run 'mitzbloom -h' for usage."
	buildUsage := "usage: mitzbloom build " + buildSynopsis
	helpStart := "Mitzbloom builds, inspects, queries and merges Bloom filter files in the"

	type want struct {
		status int
		stream string   // "stdout" or "stderr"
		lines  []string // the first lines of stream
	}
	help := func(first string) want { return want{exitOK, "stdout", []string{first}} }
	usageErr := func(cmd, msg string) want {
		return want{exitError, "stderr", []string{"mitzbloom " + cmd + ": " + msg, hint(cmd)}}
	}
	failure := func(cmd, msg string) want {
		return want{exitError, "stderr", []string{"mitzbloom " + cmd + ": " + msg}}
	}
	for _, c := range []struct {
		args  []string
		stdin string
		want  want
	}{
		// Help, on standard output.
		{[]string{"-h"}, "", help(helpStart)},
		{[]string{"-help"}, "", help(helpStart)},
		{[]string{"--help"}, "", help(helpStart)},
		{[]string{"help"}, "", help(helpStart)},
		{[]string{"help", "build"}, "", help(buildUsage)},
		{[]string{"build", "-h"}, "", help(buildUsage)},
		{[]string{"build", "--help"}, "", help(buildUsage)},
		{[]string{"build", keys, "-p", "0.01", "-h"}, "", help(buildUsage)},
		{[]string{"inspect", "-h"}, "", help("usage: mitzbloom inspect " + inspectSynopsis)},
		{[]string{"query", "-h"}, "", help("usage: mitzbloom query " + querySynopsis)},
		{[]string{"query", filter, "a", "-h"}, "", help("usage: mitzbloom query " + querySynopsis)},
		{[]string{"merge", "-h"}, "", help("usage: mitzbloom merge " + mergeSynopsis)},

		// Usage errors: one line and a hint, on standard error.
		{nil, "", want{exitError, "stderr", []string{"Usage:", "", "\tmitzbloom build " + buildSynopsis}}},
		{[]string{"frobnicate"}, "", want{exitError, "stderr", []string{`mitzbloom: unknown command "frobnicate": want one of build, inspect, query, merge or version`, mainHint}}},
		{[]string{"help", "frobnicate"}, "", want{exitError, "stderr", []string{`mitzbloom help: unknown command "frobnicate": want one of build, inspect, query, merge or version`, mainHint}}},
		{[]string{"build"}, "a\n", usageErr("build", "-p P is required: the false-positive probability, in (0, 1)")},
		{[]string{"build", "-n", "10", keys}, "", usageErr("build", "-p P is required: the false-positive probability, in (0, 1)")},
		{[]string{"build", "-p", "0", keys}, "", usageErr("build", "-p must be in (0, 1), not 0")},
		{[]string{"build", "-p", "1.5", keys}, "", usageErr("build", "-p must be in (0, 1), not 1.5")},
		{[]string{"build", "-p", "x", keys}, "", usageErr("build", `invalid value "x" for flag -p: parse error`)},
		{[]string{"build", "-p", "0.01", "-n", "-5", keys}, "", usageErr("build", "-n must be >= 0, not -5")},
		{[]string{"build", "-bogus"}, "", usageErr("build", "flag provided but not defined: -bogus")},
		{[]string{"build", keys, "-p"}, "", usageErr("build", "flag needs an argument: -p")},
		{[]string{"build", "-p", "0.01", "-funnel", "float", keys}, "", usageErr("build", `unknown funnel "float": want one of string, chars, long, int, bytes, addr, addrport`)},
		{[]string{"build", "-p", "0.01", "-strategy", "mitz16", keys}, "", usageErr("build", `unknown strategy "mitz16": want mitz64 or mitz32`)},
		{[]string{"build", "-p", "0.01"}, "a\n", usageErr("build", "-n N is required when the keys come from standard input, whose lines cannot be counted first")},
		{[]string{"build", "-p", "0.01", "-n", "2", "-", "-"}, "a\n", usageErr("build", "standard input (-) can be read only once")},
		{[]string{"inspect"}, "", usageErr("inspect", "no FILE to inspect")},
		{[]string{"inspect", "-p", "2", filter}, "", usageErr("inspect", `invalid value "2" for flag -p: 2 is not in (0, 1)`)},
		{[]string{"inspect", "-", "-"}, "", usageErr("inspect", "standard input (-) can be read only once")},
		{[]string{"query"}, "", usageErr("query", "no FILE to query")},
		{[]string{"query", filter, "-funnel", "float", "a"}, "", usageErr("query", `unknown funnel "float": want one of string, chars, long, int, bytes, addr, addrport`)},
		{[]string{"query", "-"}, string(filterBytes), usageErr("query", "the filter comes from standard input (-), so the keys must be arguments")},
		{[]string{"query", filter, "a", "-bogus"}, "", usageErr("query", "flag provided but not defined: -bogus")},
		{[]string{"merge", filter, filter}, "", usageErr("merge", "-o OUT is required")},
		{[]string{"merge", "-o", out, filter}, "", usageErr("merge", "merge needs at least two filters, A and B")},
		{[]string{"inspect", "-max-bytes", "-1", filter}, "", usageErr("inspect", `invalid value "-1" for flag -max-bytes: -1 bytes is negative; 0 means no limit`)},
		{[]string{"query", filter, "-max-bytes", "1k", "a"}, "", usageErr("query", `invalid value "1k" for flag -max-bytes: not a number of bytes`)},
		{[]string{"merge", "-max-bytes", "-5", "-o", out, filter, filter}, "", usageErr("merge", `invalid value "-5" for flag -max-bytes: -5 bytes is negative; 0 means no limit`)},

		// Flags after the other arguments are flags, and "--" ends them.
		{[]string{"query", filter, "a", "b", "-q"}, "", want{exitOK, "stdout", nil}},
		{[]string{"query", filter, "a", "-funnel", "addrport", "10.0.0.1:443"}, "", failure("query", `argument 1: "a" is not an addrport key: not an ip:port`)},
		{[]string{"query", filter, "a", "--", "-q"}, "", want{exitAbsent, "stdout", []string{"a\tmaybe", "-q\tno"}}},

		// "-" is standard input for the filter of inspect and query.
		{[]string{"inspect", "-"}, string(filterBytes), want{exitOK, "stdout", []string{"file:                      stdin", "strategy:                  MURMUR128_MITZ_64 (ordinal 1)"}}},
		{[]string{"query", "-", "a", "10.0.0.1:443"}, string(filterBytes), want{exitOK, "stdout", []string{"a\tmaybe", "10.0.0.1:443\tmaybe"}}},
		{[]string{"query", "-q", "-", "a", "b"}, string(filterBytes), want{exitOK, "stdout", nil}},
		{[]string{"merge", "-o", filepath.Join(dir, "merged.bloom"), "-", filter}, string(filterBytes), want{exitOK, "stdout", nil}},

		// Files that are not filters, and limits, named and in the units given.
		{[]string{"inspect", keys}, "", failure("inspect", keys+`: not a Guava filter file: it begins "a\nb\n10", and a filter begins with its strategy's ordinal, byte 0 or 1`)},
		{[]string{"query", keys, "a"}, "", failure("query", keys+`: not a Guava filter file: it begins "a\nb\n10", and a filter begins with its strategy's ordinal, byte 0 or 1`)},
		{[]string{"inspect", "-"}, "a\nb\n", failure("inspect", `stdin: not a Guava filter file: it begins "a\nb\n", and a filter begins with its strategy's ordinal, byte 0 or 1`)},
		{[]string{"merge", "-o", out, filter, keys}, "", failure("merge", keys+`: not a Guava filter file: it begins "a\nb\n10", and a filter begins with its strategy's ordinal, byte 0 or 1`)},
		{[]string{"inspect", "-max-bytes", "1000", filter}, "", failure("inspect", filter+": a filter of 1206 bytes, more than -max-bytes 1000")},
		{[]string{"query", "-max-bytes", "1205", "-", "a"}, string(filterBytes), failure("query", "stdin: a filter of 1206 bytes, more than -max-bytes 1205")},
		{[]string{"inspect", missing}, "", failure("inspect", "open "+missing+": no such file or directory")},
		{[]string{"inspect", subdir}, "", failure("inspect", subdir+": is a directory")},
		{[]string{"build", "-p", "0.01", "-o", out, missing}, "", failure("build", "open "+missing+": no such file or directory")},
		{[]string{"build", "-p", "0.01", "-n", "5", "-o", out, subdir}, "", failure("build", subdir+": is a directory")},
		{[]string{"build", "-p", "0.01", "-o", out, subdir}, "", failure("build", subdir+": is a directory")},
		{[]string{"build", "-p", "0.01", "-o", subdir, keys}, "", failure("build", subdir+": is a directory, not a file to write")},
		{[]string{"merge", "-o", subdir, filter, filter}, "", failure("merge", subdir+": is a directory, not a file to write")},
		{[]string{"build", "-p", "0.01", "-o", filepath.Join(missing, "f.bloom"), keys}, "", failure("build", filepath.Join(missing, "f.bloom")+": cannot create a file in "+missing+": no such file or directory")},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			res := mitzbloom(t, c.stdin, c.args...)
			stream, other := res.stdout, res.stderr
			if c.want.stream == "stderr" {
				stream, other = other, stream
			}
			if res.status != c.want.status || other != "" || !hasLines(stream, c.want.lines) {
				t.Errorf("want exit status %d and %s beginning\n%s\ngot %v", c.want.status, c.want.stream, strings.Join(c.want.lines, "\n"), res)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed command wrote %s", out)
	}
	assertNoTempFiles(t, dir)
	assertNoTempFiles(t, subdir)
}

// hasLines reports whether s begins with lines, each ended by "\n"; no
// lines means that s is empty.
func hasLines(s string, lines []string) bool {
	if len(lines) == 0 {
		return s == ""
	}
	return strings.HasPrefix(s, strings.Join(lines, "\n")+"\n")
}

// TestBuildSaturated checks that build refuses to write a filter whose
// expected false-positive probability is more than twice -p, saying what
// it would be and the -n to use, and that -force writes it with the same
// warning: on either side of the threshold, to a file and to standard
// output.
func TestBuildSaturated(t *testing.T) {
	dir := t.TempDir()
	const n, p = 1000, 0.01
	lines := numberedKeys(20_000)
	// The most keys whose filter stays within 2p, by the library's count.
	f := mustNewStringFilter(t, n, p)
	under := 0
	for under < len(lines) {
		f.Put(lines[under])
		if f.ExpectedFPP() > 2*p {
			break
		}
		under++
	}
	if under <= n || under >= len(lines) {
		t.Fatalf("the threshold is at %d keys, not between n = %d and %d", under, n, len(lines))
	}
	t.Logf("%d keys keep the filter of n = %d within 2p, %d do not", under, n, under+1)

	for _, c := range []struct {
		keys int
		fpp  float64 // of the filter of keys keys
	}{{under + 1, fppOf(t, lines[:under+1], n, p)}, {len(lines), fppOf(t, lines, n, p)}} {
		input := writeLines(t, dir, "keys.txt", lines[:c.keys])
		out := filepath.Join(dir, "f.bloom")
		detail := strconv.Itoa(c.keys) + " keys in a filter sized for 1000: expected false-positive probability " +
			strconv.FormatFloat(c.fpp, 'g', 3, 64) + ", more than twice -p 0.01; use -n " + strconv.Itoa(c.keys)
		refused := "mitzbloom build: nothing written: " + detail + ", or -force to write it anyway\n"
		res := mitzbloom(t, "", "build", "-n", "1000", "-p", "0.01", "-o", out, input)
		if res.status != exitError || res.stdout != "" || res.stderr != refused {
			t.Errorf("build of %d keys at -n 1000: want exit status 2 and\n%s got %v", c.keys, refused, res)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("a refused build wrote %s", out)
		}
		res = mitzbloom(t, "", "build", "-n", "1000", "-p", "0.01", input)
		if res.status != exitError || res.stdout != "" || res.stderr != refused {
			t.Errorf("build of %d keys at -n 1000 to standard output: want exit status 2, nothing on standard output and\n%s got %v", c.keys, refused, res)
		}

		warning := "mitzbloom build: warning: " + detail + "\n"
		res = mitzbloom(t, "", "build", "-n", "1000", "-p", "0.01", "-force", "-o", out, input)
		if res.status != exitOK || res.stdout != "" || res.stderr != warning {
			t.Errorf("build -force of %d keys at -n 1000: want exit status 0 and\n%s got %v", c.keys, warning, res)
		}
		if got := readTestFilter(t, out); got.BitSize() != mustSize(t, n, p) || got.ExpectedFPP() != c.fpp {
			t.Errorf("build -force wrote %v, expected fpp %v; want the filter of n = 1000, expected fpp %v", got, got.ExpectedFPP(), c.fpp)
		}
		// The -n it suggests builds without a word.
		res = mitzbloom(t, "", "build", "-n", strconv.Itoa(c.keys), "-p", "0.01", "-o", out, input)
		if res.status != exitOK || res.stderr != "" {
			t.Errorf("build with the -n suggested: %v", res)
		}
		if err := os.Remove(out); err != nil {
			t.Fatal(err)
		}
	}

	input := writeLines(t, dir, "keys.txt", lines[:under])
	out := filepath.Join(dir, "under.bloom")
	if res := mitzbloom(t, "", "build", "-n", "1000", "-p", "0.01", "-o", out, input); res.status != exitOK || res.stderr != "" {
		t.Errorf("build of %d keys at -n 1000, within 2p: want success in silence, got %v", under, res)
	}
}

// TestMergeOverfull checks that merge refuses, as build does, to write a
// filter whose expected false-positive probability is more than twice the p
// its filters were built with, naming the n they were built for, about how
// many keys it holds and the -n to build them with; that -force writes it
// with the same warning; and that filters built with that -n merge in
// silence. Two halves of 1200 keys are merged into a filter for 1000.
func TestMergeOverfull(t *testing.T) {
	dir := t.TempDir()
	const n, p = 1000, 0.01
	keys := numberedKeys(1200)
	a := writeLines(t, dir, "a.txt", keys[:600])
	b := writeLines(t, dir, "b.txt", keys[600:])
	build := func(name, input string, n int64) string {
		path := filepath.Join(dir, name)
		mustRun(t, "", "build", "-n", strconv.FormatInt(n, 10), "-p", "0.01", "-o", path, input)
		return path
	}
	fa, fb := build("a.bloom", a, n), build("b.bloom", b, n)
	union := mustNewStringFilter(t, n, p)
	for _, k := range keys {
		union.Put(k)
	}
	if union.ExpectedFPP() <= 2*p {
		t.Fatalf("the filter of %d keys has an expected fpp of %v, within 2p", len(keys), union.ExpectedFPP())
	}
	// The n that size a filter as n = 1000 does, at p = 0.01.
	same := func(m int64) bool { return mustSize(t, m, p) == mustSize(t, n, p) }
	lo, hi := int64(n), int64(n)
	for same(lo - 1) {
		lo--
	}
	for same(hi + 1) {
		hi++
	}
	count := union.ApproximateElementCount()
	detail := fmt.Sprintf("about %d keys in a filter sized for n %d-%d: expected false-positive probability %s, more than twice p 0.01; build the filters with -n %d",
		count, lo, hi, strconv.FormatFloat(union.ExpectedFPP(), 'g', 3, 64), count)

	out := filepath.Join(dir, "all.bloom")
	res := mitzbloom(t, "", "merge", "-o", out, fa, fb)
	if want := "mitzbloom merge: nothing written: " + detail + ", or -force to write it anyway\n"; res.status != exitError || res.stdout != "" || res.stderr != want {
		t.Errorf("merge of %d keys at n = %d: want exit status 2 and\n%s got %v", len(keys), n, want, res)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused merge wrote %s", out)
	}
	res = mitzbloom(t, "", "merge", "-force", "-o", out, fa, fb)
	if want := "mitzbloom merge: warning: " + detail + "\n"; res.status != exitOK || res.stderr != want {
		t.Errorf("merge -force of %d keys at n = %d: want exit status 0 and\n%s got %v", len(keys), n, want, res)
	}
	if got := readTestFilter(t, out); !got.Equal(union) {
		t.Errorf("merge -force wrote %v; want the filter of all %d keys", got, len(keys))
	}

	// Built with the -n it names, the halves merge without a word.
	fa, fb = build("a.bloom", a, count), build("b.bloom", b, count)
	if res := mitzbloom(t, "", "merge", "-o", out, fa, fb); res.status != exitOK || res.stderr != "" {
		t.Errorf("merge of filters built with the -n suggested: %v", res)
	}
}

// numberedKeys returns n keys, key0, key1 and on.
func numberedKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "key" + strconv.Itoa(i)
	}
	return keys
}

func fppOf(t *testing.T, keys []string, n int64, p float64) float64 {
	t.Helper()
	f := mustNewStringFilter(t, n, p)
	for _, k := range keys {
		f.Put(k)
	}
	return f.ExpectedFPP()
}

func mustNewStringFilter(t *testing.T, n int64, p float64) *bloom.Filter[string] {
	t.Helper()
	f, err := bloom.New(funnel.String, n, p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestOutputDash checks that "-o -" is standard output, for build and
// merge, as "-" is standard input, and never a file named "-".
func TestOutputDash(t *testing.T) {
	dir := t.TempDir()
	keys := writeLines(t, dir, "keys.txt", []string{"a", "b"})
	filter := filepath.Join(dir, "f.bloom")
	mustRun(t, "", "build", "-p", "0.01", "-o", filter, keys)
	built, err := os.ReadFile(filter)
	if err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(dir, "m.bloom")
	mustRun(t, "", "merge", "-o", merged, filter, filter)
	mergedBytes, err := os.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []byte
	}{
		{[]string{"build", "-p", "0.01", "-o", "-", keys}, built},
		{[]string{"build", "-p", "0.01", "-n", "2", "-o", "-"}, built},
		{[]string{"merge", "-o", "-", filter, filter}, mergedBytes},
	} {
		res := mitzbloom(t, "a\nb\n", c.args...)
		if res.status != exitOK || res.stderr != "" || res.stdout != string(c.want) {
			t.Errorf("mitzbloom %s: want exit status 0 and the %d bytes of the filter on standard output, got %v", strings.Join(c.args, " "), len(c.want), res)
		}
		if _, err := os.Stat("-"); !os.IsNotExist(err) {
			os.Remove("-")
			t.Errorf("mitzbloom %s wrote a file named -", strings.Join(c.args, " "))
		}
	}
}
