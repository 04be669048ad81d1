package readme

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// quickstartRun matches the README's command that runs the quick start, a
// shell block of that one command, and the text block after it, which
// says what the command prints.
var quickstartRun = regexp.MustCompile("(?ms)^```sh\n(go run ./examples/quickstart)\n```\n\\s*```text\n(.*?)^```\n")

// quickstartBlock matches the Go block of the README's Quick start section.
var quickstartBlock = regexp.MustCompile("(?ms)^## Quick start\n.*?^```go\n(.*?)^```\n")

// TestREADMEQuickstart runs the README's first command, exactly as
// written, in this checkout, and requires it to print what the README says
// it prints; and requires the program it runs to be the README's Quick
// start, byte for byte.
func TestREADMEQuickstart(t *testing.T) {
	root, readme := readREADME(t, "README.md")
	block := quickstartBlock.FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no Go block under ## Quick start")
	}
	program, err := os.ReadFile(filepath.Join(root, "examples", "quickstart", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(block[1]) != string(program) {
		t.Errorf("README.md's Quick start and examples/quickstart/main.go differ: make them the same program")
	}

	run := quickstartRun.FindSubmatch(readme)
	if run == nil {
		t.Fatal("README.md has no sh block of `go run ./examples/quickstart` followed by a text block of what it prints")
	}
	if first := shBlock.FindSubmatch(readme); first == nil || string(first[1]) != string(run[1])+"\n" {
		t.Errorf("the README's first command is not `%s`", run[1])
	}
	if testing.Short() {
		t.Skip("builds and runs the quick start; the run without -short runs it")
	}
	sh := exec.Command("bash", "-euo", "pipefail", "-c", string(run[1]))
	sh.Dir = root
	var stderr strings.Builder
	sh.Stderr = &stderr
	out, err := sh.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", run[1], err, stderr.String())
	}
	if string(out) != string(run[2]) {
		t.Errorf("%s prints\n%s\nand the README says it prints\n%s", run[1], out, run[2])
	}
}
