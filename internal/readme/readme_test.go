// Package readme checks the code in the repository's README.
package readme

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
)

// goBlock matches a fenced Go block of the README.
var goBlock = regexp.MustCompile("(?ms)^```go\n(.*?)^```\n")

// TestREADMECompiles builds every Go block of README.md, and every whole
// program of redisfilter/README.md, as a program of a module of its own
// that uses this checkout, as a user's code would.
func TestREADMECompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command once per block; the run without -short builds them")
	}
	root, readme := readREADME(t, "README.md")
	blocks := goBlock.FindAllSubmatch(readme, -1)
	if len(blocks) < 2 {
		t.Fatalf("README.md has %d Go blocks; the quick start and the Redis program at least were expected", len(blocks))
	}
	for i, b := range blocks {
		t.Run(fmt.Sprint("block", i+1), func(t *testing.T) {
			if !bytes.HasPrefix(b[1], []byte("package main\n")) {
				t.Fatalf("block %d is not a whole program (package main):\n%s", i+1, b[1])
			}
			buildProgram(t, root, b[1])
		})
	}
	// The operator's guide has snippets too, which need their context.
	_, guide := readREADME(t, "redisfilter/README.md")
	programs := 0
	for i, b := range goBlock.FindAllSubmatch(guide, -1) {
		if bytes.HasPrefix(b[1], []byte("package main\n")) {
			programs++
			t.Run(fmt.Sprint("redisfilter/block", i+1), func(t *testing.T) { buildProgram(t, root, b[1]) })
		}
	}
	if programs == 0 {
		t.Error("redisfilter/README.md has no whole program (package main) that opens a filter")
	}
}

// buildProgram builds code, a main package, in a module of its own that
// requires the library, and redisfilter if code imports it, from the
// checkout at root.
func buildProgram(t *testing.T, root string, code []byte) {
	t.Helper()
	// The library's go.sum, and redisfilter's, for a program that uses it.
	var sum []byte
	for _, mod := range []string{".", "redisfilter"} {
		b, err := os.ReadFile(filepath.Join(root, mod, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		sum = append(sum, b...)
	}
	dir := t.TempDir()
	mod := fmt.Sprintf("module readmecheck\n\ngo 1.24\n\nrequire github.com/mitzbloom/mitzbloom v0.0.0\n\nreplace github.com/mitzbloom/mitzbloom => %s\n", root)
	if bytes.Contains(code, []byte(`"github.com/mitzbloom/mitzbloom/redisfilter"`)) {
		// The Redis filter is a module of its own, which may require a
		// newer Go.
		if need, old := goTooOldForRedisfilter(t, root); old {
			t.Skipf("the program uses redisfilter, which requires %s, and this is %s", need, runtime.Version())
		}
		mod = fmt.Sprintf("module readmecheck\n\ngo 1.26\n\nrequire (\n\tgithub.com/mitzbloom/mitzbloom v0.0.0\n\tgithub.com/mitzbloom/mitzbloom/redisfilter v0.0.0\n)\n\nreplace github.com/mitzbloom/mitzbloom => %s\n\nreplace github.com/mitzbloom/mitzbloom/redisfilter => %s\n", root, filepath.Join(root, "redisfilter"))
	}
	write(t, filepath.Join(dir, "go.mod"), []byte(mod))
	write(t, filepath.Join(dir, "go.sum"), sum)
	write(t, filepath.Join(dir, "main.go"), code)
	cmd := exec.Command("go", "build", "-o", os.DevNull, ".")
	cmd.Dir = dir
	// -mod=mod lets the go command add the library's own requirements to
	// the throwaway go.mod.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the program does not build: %v\n%s\n%s", err, out, code)
	}
}

// readREADME returns the root of the checkout and the README at name in it.
func readREADME(t *testing.T, name string) (root string, readme []byte) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err = os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return root, readme
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
