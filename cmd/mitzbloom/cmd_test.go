package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/testkeys"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// A funnelCase makes keys of one -funnel, as values and as the lines build
// reads, so that a test can compare the command with the library.
type funnelCase[T any] struct {
	name   string
	f      funnel.Funnel[T]
	random func(r *rand.Rand) T
	encode func(T) string
}

func (c funnelCase[T]) values(r *rand.Rand, n int) []T {
	seen := map[string]bool{}
	var vs []T
	for len(vs) < n {
		v := c.random(r)
		if k := string(funnel.Append(nil, c.f, v)); !seen[k] {
			seen[k] = true
			vs = append(vs, v)
		}
	}
	return vs
}

func (c funnelCase[T]) lines(vs []T) []string {
	lines := make([]string, len(vs))
	for i, v := range vs {
		lines[i] = c.encode(v)
	}
	return lines
}

// testBuildAndQuery builds a filter of c's keys with the command and checks
// that it is byte for byte the library's filter of the same values, and that
// query answers as the library does.
func testBuildAndQuery[T any](t *testing.T, c funnelCase[T], s strategy.Strategy, strategyFlag string) {
	r := rand.New(rand.NewPCG(7, uint64(len(c.name))))
	all := c.values(r, 1500)
	inserts, probes := all[:1000], all[1000:]
	dir := t.TempDir()
	// CRLF line ends on some lines: build must drop the \r.
	lines := c.lines(inserts)
	for i := 0; i < len(lines); i += 7 {
		lines[i] += "\r"
	}
	input := writeLines(t, dir, "keys.txt", lines)
	out := filepath.Join(dir, "filter.bin")
	res := mustRun(t, "", "build", "-n", "1000", "-p", "0.02", "-funnel", c.name, "-strategy", strategyFlag, "-o", out, input)
	if res.stdout != "" || res.stderr != "" {
		t.Errorf("build printed something, not being on a terminal: %v", res)
	}

	want, err := bloom.New(c.f, 1000, 0.02, bloom.WithStrategy(s))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range inserts {
		want.Put(v)
	}
	wantBytes, err := want.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wantBytes) {
		t.Fatalf("build wrote %d bytes that differ from the library's filter of the same keys (%d bytes)", len(got), len(wantBytes))
	}

	present := mitzbloom(t, strings.Join(c.lines(inserts), "\n"), "query", out, "-funnel", c.name)
	if present.status != exitOK {
		t.Errorf("query of the keys put: %v", present)
	}
	if n := strings.Count(present.stdout, "\tmaybe\n"); n != len(inserts) {
		t.Errorf("query of the %d keys put says maybe %d times", len(inserts), n)
	}

	var wantOut strings.Builder
	anyNo := false
	for _, v := range probes {
		word := "maybe"
		if !want.MightContain(v) {
			word, anyNo = "no", true
		}
		wantOut.WriteString(c.encode(v) + "\t" + word + "\n")
	}
	if !anyNo {
		t.Fatal("every probe is a false positive: the query tests nothing")
	}
	absent := mitzbloom(t, strings.Join(c.lines(probes), "\n")+"\n", "query", out, "-funnel", c.name)
	if absent.stdout != wantOut.String() || absent.status != exitAbsent {
		t.Errorf("query of keys not put: want exit status 1 and the library's answers, got %v", absent)
	}

	// Keys as arguments, after a flag that follows FILE, and after "--"
	// for keys that look like flags. An argument cannot hold a NUL.
	args := []string{"query", out, "-funnel", c.name, "--"}
	wantOut.Reset()
	for _, v := range probes[:100] {
		if line := c.encode(v); !strings.Contains(line, "\x00") {
			args = append(args, line)
			wantOut.WriteString(line + "\t" + map[bool]string{true: "maybe", false: "no"}[want.MightContain(v)] + "\n")
		}
	}
	if res := mitzbloom(t, "", args...); res.stdout != wantOut.String() {
		t.Errorf("query of keys as arguments differs from the library: %v", res)
	}
}

var (
	textRunes   = []rune("abcxyz019 -_.:/\u00e9\u00df\u20ac\u4e2d\u00fc\x00\t\u07ff\u0800\ufffd\uffff\U00010000\U0001F600\U0010FFFF")
	stringCase  = funnelCase[string]{"string", funnel.String, randomText, func(s string) string { return s }}
	charsCase   = funnelCase[string]{"chars", funnel.UnencodedChars, randomText, func(s string) string { return s }}
	longCase    = funnelCase[int64]{"long", funnel.Int64, func(r *rand.Rand) int64 { return int64(r.Uint64()) >> r.IntN(64) }, func(v int64) string { return strconv.FormatInt(v, 10) }}
	intCase     = funnelCase[int32]{"int", funnel.Int32, func(r *rand.Rand) int32 { return int32(r.Uint32()) >> r.IntN(32) }, func(v int32) string { return strconv.FormatInt(int64(v), 10) }}
	bytesCase   = funnelCase[[]byte]{"bytes", funnel.Bytes, func(r *rand.Rand) []byte { return testkeys.Bytes(r, r.IntN(20)) }, encodeHex}
	addrCase    = funnelCase[netip.Addr]{"addr", funnel.Addr, testkeys.Addr, netip.Addr.String}
	addrPrtCase = funnelCase[netip.AddrPort]{"addrport", funnel.AddrPort, func(r *rand.Rand) netip.AddrPort {
		return netip.AddrPortFrom(testkeys.Addr(r), uint16(r.Uint32()))
	}, netip.AddrPort.String}
)

func TestBuildAndQuery(t *testing.T) {
	for _, s := range []struct {
		flag string
		s    strategy.Strategy
	}{{"mitz64", strategy.Murmur128Mitz64}, {"mitz32", strategy.Murmur128Mitz32}} {
		t.Run(stringCase.name+"-"+s.flag, func(t *testing.T) { testBuildAndQuery(t, stringCase, s.s, s.flag) })
		if s.flag == "mitz32" && testing.Short() {
			continue
		}
		t.Run(charsCase.name+"-"+s.flag, func(t *testing.T) { testBuildAndQuery(t, charsCase, s.s, s.flag) })
		t.Run(longCase.name+"-"+s.flag, func(t *testing.T) { testBuildAndQuery(t, longCase, s.s, s.flag) })
		t.Run(intCase.name+"-"+s.flag, func(t *testing.T) { testBuildAndQuery(t, intCase, s.s, s.flag) })
		t.Run(bytesCase.name+"-"+s.flag, func(t *testing.T) { testBuildAndQuery(t, bytesCase, s.s, s.flag) })
		t.Run(addrCase.name+"-"+s.flag, func(t *testing.T) { testBuildAndQuery(t, addrCase, s.s, s.flag) })
		t.Run(addrPrtCase.name+"-"+s.flag, func(t *testing.T) { testBuildAndQuery(t, addrPrtCase, s.s, s.flag) })
	}
}

// randomText returns strings of 0 to 12 characters from textRunes, none of
// which ends a line.
func randomText(r *rand.Rand) string {
	rs := make([]rune, r.IntN(13))
	for i := range rs {
		rs[i] = textRunes[r.IntN(len(textRunes))]
	}
	return string(rs)
}

// encodeHex writes upper case now and then: build accepts both.
func encodeHex(b []byte) string {
	s := hex.EncodeToString(b)
	if len(b)%3 == 0 {
		return strings.ToUpper(s)
	}
	return s
}

func TestBuildCountsLines(t *testing.T) {
	dir := t.TempDir()
	a := writeLines(t, dir, "a.txt", []string{"x", "y", "z"})
	b := filepath.Join(dir, "b.txt")
	// No newline at the end: the last line counts all the same.
	if err := os.WriteFile(b, []byte("1\n2\n\n4"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "f.bin")
	mustRun(t, "", "build", "-p", "0.001", "-o", out, a, b)
	f := readTestFilter(t, out)
	bitSize, k, err := bloom.Size(7, 0.001)
	if err != nil {
		t.Fatal(err)
	}
	if f.BitSize() != bitSize || f.NumHashFunctions() != k {
		t.Errorf("build without -n of 7 lines made %v, want %d bits and %d hash functions", f, bitSize, k)
	}
	for _, key := range []string{"x", "y", "z", "1", "2", "", "4"} {
		if !f.MightContain(key) {
			t.Errorf("the filter lacks %q", key)
		}
	}

	res := mitzbloom(t, "x\n", "build", "-p", "0.01", "-o", out)
	if res.status != exitError || !strings.HasPrefix(res.stderr, "mitzbloom build: -n N is required when the keys come from standard input") {
		t.Errorf("build from standard input without -n: want exit status 2 and a request for -n, got %v", res)
	}
	// Flags after the files.
	mustRun(t, "", "build", a, "-p", "0.01", b, "-o", out)
	if f := readTestFilter(t, out); !f.MightContain("x") || !f.MightContain("4") || f.BitSize() != mustSize(t, 7, 0.01) {
		t.Errorf("build a.txt -p 0.01 b.txt -o FILE did not build a filter of a.txt and b.txt")
	}
	if inspect := mustRun(t, "", "inspect", out, "-json"); !strings.HasPrefix(inspect.stdout, "{") {
		t.Errorf("inspect FILE -json: %v", inspect)
	}

	res = mustRun(t, "x\ny\n", "build", "-n", "2", "-p", "0.01", "-o", out, "-")
	if f := readTestFilter(t, out); !f.MightContain("x") || !f.MightContain("y") {
		t.Errorf("build from standard input lacks its keys: %v", res)
	}
}

func mustSize(t *testing.T, n int64, p float64) int64 {
	t.Helper()
	bitSize, _, err := bloom.Size(n, p)
	if err != nil {
		t.Fatal(err)
	}
	return bitSize
}

func readTestFilter(t *testing.T, path string) *bloom.Filter[string] {
	t.Helper()
	return readFilterOf(t, path, funnel.String)
}

func readFilterOf[T any](t *testing.T, path string, fun funnel.Funnel[T]) *bloom.Filter[T] {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	f, err := bloom.ReadFrom(file, fun)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestBuildBadLines(t *testing.T) {
	dir := t.TempDir()
	good := writeLines(t, dir, "good.txt", []string{"1", "2"})
	bad := writeLines(t, dir, "bad.txt", []string{"3", "four", "5", "", "99999999999999999999"})
	out := filepath.Join(dir, "f.bin")
	previous := []byte("the previous contents")
	if err := os.WriteFile(out, previous, 0o644); err != nil {
		t.Fatal(err)
	}

	res := mitzbloom(t, "", "build", "-n", "10", "-p", "0.01", "-funnel", "long", "-o", out, good, bad)
	if res.status != exitError {
		t.Errorf("build with bad lines: want exit status 2, got %v", res)
	}
	for _, want := range []string{bad + `:2: "four"`, bad + `:4: ""`, bad + `:5: "99999999999999999999": value out of range`, "3 lines are not long keys"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("build with bad lines does not report %q: %v", want, res)
		}
	}
	if strings.Contains(res.stderr, good) || strings.Contains(res.stderr, bad+":1:") {
		t.Errorf("build reports good lines as bad: %v", res)
	}
	assertFile(t, out, previous)
	assertNoTempFiles(t, dir)

	res = mustRun(t, "", "build", "-n", "10", "-p", "0.01", "-funnel", "long", "-skip-bad", "-o", out, good, bad)
	if !strings.Contains(res.stderr, "skipped 3 bad lines") {
		t.Errorf("build -skip-bad does not count the bad lines: %v", res)
	}
	f := readFilterOf(t, out, funnel.Int64)
	for _, v := range []int64{1, 2, 3, 5} {
		if !f.MightContain(v) {
			t.Errorf("build -skip-bad lacks %d", v)
		}
	}

	// Bad keys for query are errors too, named by where they come from.
	res = mitzbloom(t, "1\nx\n", "query", "-funnel", "long", out)
	if res.status != exitError || !strings.Contains(res.stderr, `stdin:2: "x" is not a long key`) {
		t.Errorf("query of a bad key on standard input: want exit status 2 and stdin:2, got %v", res)
	}
	res = mitzbloom(t, "", "query", "-funnel", "addr", out, "1.2.3.4", "1.2.3")
	if res.status != exitError || !strings.Contains(res.stderr, `argument 2: "1.2.3" is not an addr key`) {
		t.Errorf("query of a bad key argument: want exit status 2 and argument 2, got %v", res)
	}
}

func assertFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed: %d bytes, was %d", path, len(got), len(want))
	}
}

// assertNoTempFiles checks that a failed command left no temporary file.
func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("a temporary file is left behind: %s", e.Name())
		}
	}
}

// corruptFiles are streams that no command may accept, with what the error
// must say.
var corruptFiles = []struct {
	name, hex, want string
}{
	{"empty", "", "empty, not a Guava filter file"},
	{"one byte", "01", "unexpected EOF"},
	{"header only", "010500000002", "stream ends after 6 of 22 bytes: unexpected EOF"},
	{"truncated words", "0105000000020000000000000003", "stream ends after 14 of 22 bytes"},
	{"unknown strategy", "02050000000100000000000000ff", `not a Guava filter file: it begins "\x02\x05\x00\x00\x00\x01", and a filter begins with its strategy's ordinal, byte 0 or 1`},
	{"text", hex.EncodeToString([]byte("10.0.0.1:443\n")), `not a Guava filter file: it begins "10.0.0", and a filter begins`},
	{"short text", hex.EncodeToString([]byte("a\n")), `not a Guava filter file: it begins "a\n", and a filter begins`},
	{"no words", "010500000000", "word count 0 must be > 0"},
	{"no hash functions", "01000000000100000000000000ff", "number of hash functions (0) must be > 0"},
	{"trailing byte", "01050000000100000000000000ff00", "not a filter, a Rotating snapshot or a Scalable"},
	{"two shapes", "01050000000100000000000000ff01040000000100000000000000ff", "followed by a different one"},
	{"three filters", strings.Repeat("01050000000100000000000000ff", 3), "more bytes after two filters"},
}

func TestCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.bin")
	good := filepath.Join(dir, "good.bin")
	mustRun(t, "a\n", "build", "-n", "1", "-p", "0.01", "-o", good)
	for _, c := range corruptFiles {
		data, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".bin")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"inspect", path},
			{"inspect", "-json", path},
			{"query", path, "a"},
			{"merge", "-o", out, good, path},
			{"merge", "-o", out, path, good},
		} {
			res := mitzbloom(t, "", args...)
			if res.status != exitError || !strings.Contains(res.stderr, path+": ") || !strings.Contains(res.stderr, c.want) {
				t.Errorf("%s: %s: want exit status 2 and an error naming the file and saying %q, got %v", c.name, strings.Join(args, " "), c.want, res)
			}
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed merge wrote its output: %v", err)
	}
	assertNoTempFiles(t, dir)
}

func TestMaxBytes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.bin")
	mustRun(t, "a\n", "build", "-n", "1000", "-p", "0.01", "-o", path)
	size := fileSize(t, path) // 6 + 9600/8 = 1206
	rotating := filepath.Join(dir, "r.bin")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rotating, append(data, data...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file     string
		maxBytes int64
		ok       bool
	}{
		{path, size, true},
		{path, size - 1, false},
		{path, 7, false},
		{rotating, 2 * size, true},
		{rotating, 2*size - 1, false},
		{rotating, size, false},
	} {
		limit := strconv.FormatInt(c.maxBytes, 10)
		for _, args := range [][]string{
			{"inspect", "-max-bytes", limit, c.file},
			{"query", c.file, "-max-bytes", limit, "a"},
		} {
			res := mitzbloom(t, "", args...)
			switch {
			case c.ok && res.status != exitOK:
				t.Errorf("%s: want success, got %v", strings.Join(args, " "), res)
			case !c.ok && (res.status != exitError || !strings.Contains(res.stderr, c.file+": ") || !strings.Contains(res.stderr, "more than -max-bytes "+limit+"\n")):
				t.Errorf("%s: want exit status 2 and a file over -max-bytes %s, got %v", strings.Join(args, " "), limit, res)
			}
		}
	}
	res := mitzbloom(t, "", "merge", "-max-bytes", strconv.FormatInt(size-1, 10), "-o", filepath.Join(dir, "m.bin"), path, path)
	if want := fmt.Sprintf("mitzbloom merge: %s: a filter of %d bytes, more than -max-bytes %d\n", path, size, size-1); res.status != exitError || res.stderr != want {
		t.Errorf("merge over -max-bytes: want exit status 2 and %q, got %v", want, res)
	}
}

func TestMerge(t *testing.T) {
	dir := t.TempDir()
	build := func(name string, keys string, args ...string) string {
		path := filepath.Join(dir, name)
		mustRun(t, keys, append([]string{"build", "-o", path}, args...)...)
		return path
	}
	a := build("a.bin", "a1\na2\n", "-n", "100", "-p", "0.01")
	b := build("b.bin", "b1\nb2\n", "-n", "100", "-p", "0.01")
	c := build("c.bin", "c1\n", "-n", "100", "-p", "0.01")
	out := filepath.Join(dir, "out.bin")
	mustRun(t, "", "merge", "-o", out, a, b, c)
	res := mitzbloom(t, "", "query", out, "a1", "a2", "b1", "b2", "c1")
	if res.status != exitOK {
		t.Errorf("the merged filter lacks keys: %v", res)
	}
	// The library's PutAll of the same filters gives the same bytes.
	want := readTestFilter(t, a)
	for _, other := range []string{b, c} {
		if err := want.PutAll(readTestFilter(t, other)); err != nil {
			t.Fatal(err)
		}
	}
	wantBytes, err := want.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	assertFile(t, out, wantBytes)

	// Incompatible filters, with Guava's messages, in Guava's order of
	// checks; the interop test compares them with Guava's own.
	for _, c := range []struct {
		name, want string
		args       []string
	}{
		{"k", "BloomFilters must have the same number of hash functions (7 != 10); build both with the same -n and -p", []string{"-n", "100", "-p", "0.001"}},
		{"size", "BloomFilters must have the same size underlying bit arrays (960 != 1920); build both with the same -n and -p", []string{"-n", "200", "-p", "0.01"}},
		{"strategy", "BloomFilters must have equal strategies (MURMUR128_MITZ_64 != MURMUR128_MITZ_32); build both with the same -strategy", []string{"-n", "100", "-p", "0.01", "-strategy", "mitz32"}},
	} {
		other := build(c.name+".bin", "x\n", c.args...)
		res := mitzbloom(t, "", "merge", "-o", out, a, b, other)
		if want := "mitzbloom merge: " + other + ": cannot merge into " + a + ": " + c.want + "\n"; res.status != exitError || res.stderr != want {
			t.Errorf("merge of an incompatible filter (%s): want exit status 2 and %q, got %v", c.name, c.want, res)
		}
	}
	// At n = 3 only the k rules differ, not the sizes.
	current := build("current.bin", "x\n", "-n", "3", "-p", "0.01")
	legacy := build("legacy.bin", "x\n", "-n", "3", "-p", "0.01", "-legacy-k")
	res = mitzbloom(t, "", "merge", "-o", out, current, legacy)
	if want := "mitzbloom merge: " + legacy + ": cannot merge into " + current + ": BloomFilters must have the same number of hash functions (7 != 6); build both with the same -n and -p, and -legacy-k for both or neither\n"; res.status != exitError || res.stderr != want {
		t.Errorf("merge of filters of different k rules: want exit status 2 and %q, got %v", want, res)
	}
	assertFile(t, out, wantBytes)
	assertNoTempFiles(t, dir)

	res = mitzbloom(t, "", "merge", "-o", out, a)
	if res.status != exitError || !strings.Contains(res.stderr, "at least two filters") {
		t.Errorf("merge of one filter: want a usage error, got %v", res)
	}
}

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 12 {
		p := commonFPPs[r.IntN(len(commonFPPs))]
		n := int64(1) << r.IntN(24)
		n += r.Int64N(n)
		path := filepath.Join(dir, strconv.Itoa(i)+".bin")
		keys := make([]string, 1+r.IntN(200))
		for j := range keys {
			keys[j] = strconv.Itoa(r.Int())
		}
		args := []string{"build", "-n", strconv.FormatInt(n, 10), "-p", strconv.FormatFloat(p, 'g', -1, 64), "-o", path}
		legacy := r.IntN(2) == 0
		if legacy {
			args = append(args, "-legacy-k")
		}
		// Up to 200 keys in a filter for as few as 1: some are saturated,
		// which inspect describes too.
		args = append(args, "-force")
		mustRun(t, strings.Join(keys, "\n"), args...)

		res := mustRun(t, "", "inspect", "-json", path)
		var got report
		if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
			t.Fatalf("inspect -json: %v\n%s", err, res.stdout)
		}
		f := readTestFilter(t, path)
		want := report{File: path, Kind: "filter", filterReport: filterReport{
			Strategy: "MURMUR128_MITZ_64", StrategyOrdinal: 1, HashFunctions: f.NumHashFunctions(),
			BitSize: f.BitSize(), Bytes: fileSize(t, path), BitCount: f.BitCount(),
			FillRatio:               float64(f.BitCount()) / float64(f.BitSize()),
			ApproximateElementCount: f.ApproximateElementCount(), ExpectedFPP: f.ExpectedFPP(),
		}}
		sizings := got.Sizings
		got.Sizings = nil
		if !jsonEqual(t, got, want) {
			t.Errorf("inspect -json of n=%d p=%v:\n got %+v\nwant %+v", n, p, got, want)
		}
		found := false
		for _, s := range sizings {
			found = found || (s.FPP == p && s.MinInsertions <= n && n <= s.MaxInsertions && (s.HashRule == "any" || s.HashRule == map[bool]string{true: "legacy", false: "current"}[legacy]))
		}
		if !found {
			t.Errorf("inspect of a filter built with n=%d p=%v legacy=%t does not find them: %+v", n, p, legacy, sizings)
		}

		text := mustRun(t, "", "inspect", path).stdout
		count := strconv.FormatInt(f.ApproximateElementCount(), 10)
		if f.BitCount() == f.BitSize() {
			count = "unknown: every bit is set"
		}
		for _, want := range []string{
			"bit size:                  " + strconv.FormatInt(f.BitSize(), 10) + "\n",
			"approximate element count: " + count + "\n",
			"expected fpp:              " + strconv.FormatFloat(f.ExpectedFPP(), 'g', -1, 64) + "\n",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("inspect does not print %q:\n%s", want, text)
			}
		}
	}
}

// jsonEqual compares a and b as inspect -json writes them.
func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

// TestInspectExtraFPP checks that -p adds a p for inspect to try, and that
// one it tries anyway is not tried twice.
func TestInspectExtraFPP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.bin")
	mustRun(t, "a\n", "build", "-n", "5000", "-p", "0.0123", "-o", path)
	sizings := func(args ...string) []sizing {
		var r report
		res := mustRun(t, "", append(append([]string{"inspect", "-json"}, args...), path)...)
		if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
			t.Fatal(err)
		}
		return r.Sizings
	}
	without, with := sizings(), sizings("-p", "0.0123", "-p", "0.01", "-p", "0.0123")
	bitSize, k, err := bloom.Size(5000, 0.0123)
	if err != nil {
		t.Fatal(err)
	}
	want := append(without, sizingsOf(bitSize, k, []float64{0.0123})...)
	if !jsonEqual(t, with, want) {
		t.Errorf("inspect -p 0.0123 -p 0.01 -p 0.0123: %+v, want %+v", with, want)
	}
	for _, s := range want {
		if s.FPP == 0.0123 && s.MinInsertions <= 5000 && 5000 <= s.MaxInsertions {
			return
		}
	}
	t.Errorf("inspect -p 0.0123 does not find n = 5000 in %+v", with)
}

func TestSizingsOf(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		p := commonFPPs[r.IntN(len(commonFPPs))]
		n := r.Int64N(1 << r.IntN(40))
		bitSize, k, err := bloom.Size(n, p)
		if err != nil {
			continue
		}
		sizings := sizingsOf(bitSize, k, []float64{p})
		// Every n in the ranges gives the filter, and the ones just
		// outside do not.
		covered := false
		for _, s := range sizings {
			covered = covered || (s.MinInsertions <= max(n, 1) && max(n, 1) <= s.MaxInsertions)
			for _, m := range []int64{s.MinInsertions, (s.MinInsertions + s.MaxInsertions) / 2, s.MaxInsertions} {
				if hashRule(m, p, bitSize, k) != s.HashRule {
					t.Errorf("n=%d p=%v: sizing %v claims %d, whose rule is %q", n, p, s, m, hashRule(m, p, bitSize, k))
				}
			}
			if rule := hashRule(s.MinInsertions-1, p, bitSize, k); rule == s.HashRule && s.MinInsertions > 1 {
				t.Errorf("n=%d p=%v: sizing %v misses %d", n, p, s, s.MinInsertions-1)
			}
			if rule := hashRule(s.MaxInsertions+1, p, bitSize, k); rule == s.HashRule {
				t.Errorf("n=%d p=%v: sizing %v misses %d", n, p, s, s.MaxInsertions+1)
			}
		}
		if !covered {
			t.Errorf("n=%d p=%v (%d bits, k=%d): sizings %v miss it", n, p, bitSize, k, sizings)
		}
	}
	if s := sizingsOf(64, 200, commonFPPs); len(s) != 0 {
		t.Errorf("a filter no p gives has sizings %v", s)
	}
}

func TestRotatingSnapshot(t *testing.T) {
	clock := bloomtest.NewClock(time.Unix(0, 0))
	rot, err := bloom.NewRotating(funnel.String, 500, 0.01, time.Minute, bloom.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		rot.Put("old" + strconv.Itoa(i))
	}
	clock.Advance(time.Minute)
	for i := range 200 {
		rot.Put("new" + strconv.Itoa(i))
	}
	path := filepath.Join(t.TempDir(), "rotating.bin")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rot.WriteTo(file); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}

	res := mustRun(t, "", "inspect", "-json", path)
	var got report
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatal(err)
	}
	stats := rot.Stats()
	if got.Kind != "rotating" || len(got.Generations) != 2 {
		t.Fatalf("inspect of a Rotating snapshot: %+v", got)
	}
	if got.ApproximateElementCount != stats.ApproximateElementCount || got.ExpectedFPP != stats.ExpectedFPP {
		t.Errorf("inspect says %d elements, fpp %v; Rotating.Stats says %d, %v",
			got.ApproximateElementCount, got.ExpectedFPP, stats.ApproximateElementCount, stats.ExpectedFPP)
	}
	for i, g := range []bloom.GenerationStats{stats.Current, stats.Previous} {
		if got.Generations[i].ApproximateElementCount != g.ApproximateElementCount || got.Generations[i].ExpectedFPP != g.ExpectedFPP || got.Generations[i].FillRatio != g.FillRatio {
			t.Errorf("generation %d: inspect %+v, Rotating.Stats %+v", i, got.Generations[i], g)
		}
	}

	keys := []string{"old1", "new1", "old299", "new199"}
	for i := range 50 {
		keys = append(keys, "never"+strconv.Itoa(i))
	}
	q := mitzbloom(t, strings.Join(keys, "\n")+"\n", "query", path)
	var want strings.Builder
	for _, k := range keys {
		want.WriteString(k + "\t" + map[bool]string{true: "maybe", false: "no"}[rot.MightContain(k)] + "\n")
	}
	if q.stdout != want.String() || q.status != exitAbsent {
		t.Errorf("query of a Rotating snapshot differs from Rotating.MightContain: %v", q)
	}
	res = mitzbloom(t, "", "merge", "-o", filepath.Join(t.TempDir(), "m.bin"), path, path)
	if res.status != exitError || !strings.Contains(res.stderr, "a Rotating snapshot") {
		t.Errorf("merge of a Rotating snapshot: want an error, got %v", res)
	}
}

func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args, files []string
		o           string
	}{
		{nil, nil, ""},
		{[]string{"a", "-o", "x", "b"}, []string{"a", "b"}, "x"},
		{[]string{"-o", "x", "a", "--", "-b", "-o"}, []string{"a", "-b", "-o"}, "x"},
		{[]string{"--", "-o"}, []string{"-o"}, ""},
		{[]string{"-", "a"}, []string{"-", "a"}, ""},
	} {
		fs := (&env{stdout: io.Discard, stderr: io.Discard}).newFlags(&command{name: "test"})
		o := fs.String("o", "", "")
		files, stop, _ := fs.parse(c.args)
		if stop || strings.Join(files, ",") != strings.Join(c.files, ",") || *o != c.o {
			t.Errorf("parse(%q) = %q, -o %q, stop %t; want %q, -o %q", c.args, files, *o, stop, c.files, c.o)
		}
	}
}

// A lineCase is a funnelCase with its type parameter hidden, so that cases
// of every funnel fit in one list.
type lineCase interface {
	kind() string
	randomLines(r *rand.Rand, n int) []string
}

func (c funnelCase[T]) kind() string { return c.name }

func (c funnelCase[T]) randomLines(r *rand.Rand, n int) []string { return c.lines(c.values(r, n)) }

var allFunnelCases = []lineCase{stringCase, charsCase, longCase, intCase, bytesCase, addrCase, addrPrtCase}

// TestBuildInProcess runs build in the test's process, where the race
// detector sees its two goroutines, on inputs of several chunks each.
func TestBuildInProcess(t *testing.T) {
	dir := t.TempDir()
	var inputs []string
	var keys []int64
	for i := range 3 {
		var lines []string
		for j := range 150_000 + i*1000 { // about 1.1 MB: two chunks or more
			v := int64(i)<<40 | int64(j)
			keys = append(keys, v)
			lines = append(lines, strconv.FormatInt(v, 10))
		}
		inputs = append(inputs, writeLines(t, dir, "in"+strconv.Itoa(i)+".txt", lines))
	}
	for _, funnelName := range []string{"string", "long"} {
		out := filepath.Join(dir, funnelName+".bin")
		var stderr strings.Builder
		e := &env{stdin: strings.NewReader(""), stdout: &strings.Builder{}, stderr: &stderr}
		args := append([]string{"build", "-p", "0.01", "-funnel", funnelName, "-o", out}, inputs...)
		if status := run(args, e); status != exitOK {
			t.Fatalf("build -funnel %s: exit status %d: %s", funnelName, status, stderr.String())
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		switch funnelName {
		case "string":
			f, err := bloom.New(funnel.String, int64(len(keys)), 0.01)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range keys {
				f.Put(strconv.FormatInt(v, 10))
			}
			want, err = f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
		case "long":
			f, err := bloom.New(funnel.Int64, int64(len(keys)), 0.01)
			if err != nil {
				t.Fatal(err)
			}
			f.PutMany(keys)
			want, err = f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(data, want) {
			t.Errorf("build -funnel %s of %d keys in %d files differs from the library's filter", funnelName, len(keys), len(inputs))
		}
	}

	// Bad lines in the second file of three: reported, and nothing written.
	bad := writeLines(t, dir, "bad.txt", []string{"1", "x"})
	out := filepath.Join(dir, "bad.bin")
	var stderr strings.Builder
	e := &env{stdin: strings.NewReader(""), stdout: &strings.Builder{}, stderr: &stderr}
	if status := run([]string{"build", "-p", "0.01", "-funnel", "long", "-o", out, inputs[0], bad, inputs[1]}, e); status != exitError || !strings.Contains(stderr.String(), bad+`:2: "x"`) {
		t.Errorf("build with a bad line: exit status %d: %s", status, stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed build wrote %s", out)
	}
}

// TestSaturation checks the advice build gives for a saturated filter: the
// number of keys as -n when they outnumber it, and a larger -n otherwise,
// which only a filter unlucky beyond all odds needs.
func TestSaturation(t *testing.T) {
	for _, c := range []struct {
		keys, n int64
		want    string
	}{
		{5000, 1000, "5000 keys in a filter sized for 1000: expected false-positive probability 0.5, more than twice -p 0.001; use -n 5000"},
		{1000, 1000, "1000 keys in a filter sized for 1000: expected false-positive probability 0.5, more than twice -p 0.001; use a larger -n"},
	} {
		b := &builder{n: c.n, p: 0.001, keys: c.keys, fpp: 0.5}
		if got := b.load().String(); got != c.want {
			t.Errorf("saturation of %d keys at n = %d:\n got %s\nwant %s", c.keys, c.n, got, c.want)
		}
	}
}

// TestMergedLoadOtherP checks the load merge checks for a filter of a p
// that inspect does not try: it takes the largest p that gives its number of
// hash functions, 2^(½−k), and the n that p sizes it for.
func TestMergedLoadOtherP(t *testing.T) {
	const n, p = 1000, 0.00025 // k = 12, which no p inspect tries gives
	f, err := bloom.New(funnel.Bytes, n, p)
	if err != nil {
		t.Fatal(err)
	}
	if s := sizingsOf(f.BitSize(), f.NumHashFunctions(), commonFPPs); len(s) > 0 {
		t.Fatalf("the filter of n = %d, p = %v is also that of %v", n, p, s)
	}
	for i := range 4 * n {
		f.Put([]byte(strconv.Itoa(i)))
	}
	l := mergedLoad(f)
	k := f.NumHashFunctions()
	if want := math.Pow(2, 0.5-float64(k)); l.p != want || l.p < p {
		t.Errorf("merge takes p = %v for k = %d; want %v, at least the p of %v it was built with", l.p, k, want, p)
	}
	if l.fpp != f.ExpectedFPP() || l.fpp <= 2*l.p {
		t.Errorf("merge takes an expected fpp of %v for a filter of %v, more than twice %v", l.fpp, f.ExpectedFPP(), l.p)
	}
	// 2^(½−k) sizes the filter for fewer keys than p does, by ln 0.3 / ln 2^(½−k).
	sized := int64(float64(f.BitSize()) * math.Ln2 / (float64(k) - 0.5))
	if wantN := float64(n) * math.Log(p) / math.Log(l.p); math.Abs(float64(sized)-wantN) > 0.01*wantN {
		t.Errorf("sized for %d; want about %v", sized, wantN)
	}
	want := fmt.Sprintf("about %d keys in a filter sized for about %d: expected false-positive probability %s, more than twice p %s; build the filters with -n %d",
		f.ApproximateElementCount(), sized, formatFPP(l.fpp), strconv.FormatFloat(l.p, 'g', -1, 64), f.ApproximateElementCount())
	if got := l.String(); got != want {
		t.Errorf("merge says\n%s\nwant\n%s", got, want)
	}
}
