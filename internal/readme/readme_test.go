// Package readme checks the code in the repository's README.
package readme

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// goBlock matches a fenced Go block of the README.
var goBlock = regexp.MustCompile("(?ms)^```go\n(.*?)^```\n")

// TestREADMECompiles builds every Go block of README.md as a program of a
// module of its own that uses this checkout, as a user's code would.
func TestREADMECompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command once per block; the run without -short builds them")
	}
	root, readme := readREADME(t, "README.md")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlock.FindAllSubmatch(readme, -1)
	if len(blocks) < 2 {
		t.Fatalf("README.md has %d Go blocks; the quick start and the funnel example at least were expected", len(blocks))
	}
	for i, b := range blocks {
		code := b[1]
		t.Run(fmt.Sprint("block", i+1), func(t *testing.T) {
			if !bytes.HasPrefix(code, []byte("package main\n")) {
				t.Fatalf("block %d is not a whole program (package main):\n%s", i+1, code)
			}
			dir := t.TempDir()
			mod := fmt.Sprintf("module readmecheck\n\ngo 1.24\n\nrequire github.com/mitzbloom/mitzbloom v0.0.0\n\nreplace github.com/mitzbloom/mitzbloom => %s\n", root)
			write(t, filepath.Join(dir, "go.mod"), []byte(mod))
			write(t, filepath.Join(dir, "go.sum"), sum)
			write(t, filepath.Join(dir, "main.go"), code)
			cmd := exec.Command("go", "build", "-o", os.DevNull, ".")
			cmd.Dir = dir
			// -mod=mod lets the go command add the library's own
			// requirements to the throwaway go.mod.
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("block %d does not build: %v\n%s\n%s", i+1, err, out, code)
			}
		})
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
