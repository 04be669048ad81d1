package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// TestBuildScalable builds Scalables from standard input, without -n and
// with it, and requires the bytes of a bloom.Scalable made with the same
// arguments and given the same keys; then inspect and query read the file
// as the library does.
func TestBuildScalable(t *testing.T) {
	dir := t.TempDir()
	var keys []string
	for i := range 5000 {
		keys = append(keys, fmt.Sprint("key-", i))
	}
	stdin := strings.Join(keys, "\n") + "\n"
	for _, c := range []struct {
		name string
		args []string
		n    int64
	}{
		{"default n", nil, defaultScalableN},
		{"n 100", []string{"-n", "100"}, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".bin")
			mustRun(t, stdin, append([]string{"build", "-scalable", "-p", "0.01", "-o", out}, c.args...)...)

			want, err := bloom.NewScalable(funnel.String, c.n, 0.01)
			if err != nil {
				t.Fatal(err)
			}
			want.PutMany(keys)
			var wantBytes bytes.Buffer
			if _, err := want.WriteTo(&wantBytes); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, wantBytes.Bytes()) {
				t.Fatalf("build -scalable wrote %d bytes, unlike the %d of bloom.Scalable's WriteTo", len(got), wantBytes.Len())
			}
			checkScalableReport(t, out, want)
			checkScalableQuery(t, out, want, keys)
			checkScalableSizing(t, out, c.n, 0.01, got)
		})
	}
}

// checkScalableSizing requires inspect to report, of the Scalable in file,
// the n and p it was built with, and those to read it back with
// bloom.WithSizing into a Scalable that goes on growing.
func checkScalableSizing(t *testing.T, file string, n int64, p float64, data []byte) {
	t.Helper()
	var r report
	if err := json.Unmarshal([]byte(mustRun(t, "", "inspect", "-json", file).stdout), &r); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range r.Sizings {
		if s.FPP == p && s.MinInsertions <= n && n <= s.MaxInsertions {
			found = true
		}
		read, err := bloom.ReadScalable(bytes.NewReader(data), funnel.String, bloom.WithSizing(s.MinInsertions, s.FPP))
		if err != nil {
			t.Errorf("inspect's sizing %v does not read the file back: %v", s, err)
			continue
		}
		read.Put("one more")
	}
	if !found {
		t.Errorf("inspect's sizings %v lack n %d at p %v", r.Sizings, n, p)
	}
	text := mustRun(t, "", "inspect", file).stdout
	if want := fmt.Sprintf("created as:                bloom.NewScalable with n %d", n); !strings.Contains(text, want) {
		t.Errorf("inspect's text lacks %q:\n%s", want, text)
	}
}

func checkScalableReport(t *testing.T, file string, s *bloom.Scalable[string]) {
	t.Helper()
	st := s.Stats()
	res := mustRun(t, "", "inspect", "-json", file)
	var r report
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("inspect -json: %v\n%s", err, res.stdout)
	}
	if r.Kind != "scalable" || len(r.Stages) != len(st.Stages) {
		t.Fatalf("inspect says %s of %d stages, want scalable of %d", r.Kind, len(r.Stages), len(st.Stages))
	}
	if r.BitSize != st.BitSize || r.ExpectedFPP != st.ExpectedFPP {
		t.Errorf("inspect: total %d bits at %v, want %d at %v", r.BitSize, r.ExpectedFPP, st.BitSize, st.ExpectedFPP)
	}
	var count int64
	for i, stage := range st.Stages {
		got := r.Stages[i]
		if got.BitSize != stage.BitSize || got.HashFunctions != stage.NumHashFunctions ||
			got.FillRatio != stage.FillRatio || got.ExpectedFPP != stage.ExpectedFPP || got.ApproximateElementCount != stage.ApproximateElementCount {
			t.Errorf("inspect: stage %d is %+v, want %+v", i, got, stage)
		}
		count += stage.ApproximateElementCount
	}
	if r.ApproximateElementCount != count {
		t.Errorf("inspect: total count %d, want the stages' %d", r.ApproximateElementCount, count)
	}
	text := mustRun(t, "", "inspect", file).stdout
	for _, want := range []string{
		fmt.Sprintf("kind:                      Scalable, %d stages; the total:\n", len(st.Stages)),
		fmt.Sprintf("bit size:                  %d\n", st.BitSize),
		fmt.Sprintf("stage %d:\n", len(st.Stages)-1),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("inspect's text lacks %q:\n%s", want, text)
		}
	}
}

func checkScalableQuery(t *testing.T, file string, s *bloom.Scalable[string], keys []string) {
	t.Helper()
	probes := append([]string(nil), keys[:100]...)
	for i := range 2000 {
		probes = append(probes, fmt.Sprint("absent-", i))
	}
	res := mitzbloom(t, strings.Join(probes, "\n")+"\n", "query", file)
	if res.status != exitAbsent {
		t.Fatalf("query of absent keys: %v", res)
	}
	lines := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
	if len(lines) != len(probes) {
		t.Fatalf("query answered %d keys of %d", len(lines), len(probes))
	}
	positives := 0
	for i, line := range lines {
		want := "no"
		if s.MightContain(probes[i]) {
			want = "maybe"
		}
		if line != probes[i]+"\t"+want {
			t.Errorf("query: %q, want %q", line, probes[i]+"\t"+want)
		}
		if i >= 100 && want == "maybe" {
			positives++
		}
	}
	t.Logf("query agrees with MightContain on %d keys, %d false positives", len(probes), positives)
}

// TestScalableFiles: files that begin as a Scalable's stages but go wrong,
// the -max-bytes limit over all stages, and merge, which refuses stages.
func TestScalableFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.bin")
	var keys []string
	for i := range 1000 {
		keys = append(keys, strconv.Itoa(i))
	}
	mustRun(t, strings.Join(keys, "\n")+"\n", "build", "-scalable", "-n", "100", "-p", "0.01", "-o", file)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	stage0 := 6 + 8*int64(binary.BigEndian.Uint32(data[2:6]))
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", data[:len(data)-3], "unexpected EOF"},
		{"a smaller stage last", append(append([]byte(nil), data...), data[:stage0]...), "is followed by one that is not larger"},
		{"a trailing byte", append(append([]byte(nil), data...), 1), "after 4 stages of a Scalable"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".bin")
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"inspect", path}, {"query", path, "1"}} {
			res := mitzbloom(t, "", args...)
			if res.status != exitError || !strings.Contains(res.stderr, path+": ") || !strings.Contains(res.stderr, c.want) {
				t.Errorf("%s: %s: want exit status 2 and an error saying %q, got %v", c.name, strings.Join(args, " "), c.want, res)
			}
		}
	}

	for _, c := range []struct {
		maxBytes int64
		ok       bool
	}{{size, true}, {size - 1, false}, {stage0, false}} {
		limit := strconv.FormatInt(c.maxBytes, 10)
		res := mitzbloom(t, "", "inspect", "-max-bytes", limit, file)
		if c.ok != (res.status == exitOK) || !c.ok && !strings.Contains(res.stderr, "more than -max-bytes "+limit) {
			t.Errorf("inspect -max-bytes %s of a %d-byte Scalable: %v", limit, size, res)
		}
	}

	res := mitzbloom(t, "", "merge", "-o", filepath.Join(dir, "m.bin"), file, file)
	if res.status != exitError || !strings.Contains(res.stderr, "a Scalable's stages, not a filter") {
		t.Errorf("merge of a Scalable: %v", res)
	}
}
