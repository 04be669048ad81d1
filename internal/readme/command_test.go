package readme

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// shBlock matches a fenced shell block of the README.
var shBlock = regexp.MustCompile("(?ms)^```sh\n(.*?)^```\n")

// TestREADMECommandLine runs the README's workflow for mitzbloom, block as
// written, against the command built from this checkout, on a blocklist and
// an extra list of its files: every command must succeed, and the merged
// filter must hold the keys of both.
func TestREADMECommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command; the run without -short runs the workflow")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var workflow string
	for _, b := range shBlock.FindAllSubmatch(readme, -1) {
		if strings.Contains(string(b[1]), "mitzbloom build ") {
			workflow = string(b[1])
		}
	}
	if workflow == "" {
		t.Fatal("README.md has no sh block with the mitzbloom build workflow")
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./cmd/mitzbloom")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the command: %v\n%s", err, out)
	}
	// Two lists of different lengths, each with keys of its own; the
	// blocklist has the keys the README queries.
	var blocklist, extra []string
	for i := range 5000 {
		blocklist = append(blocklist, "10.1."+strconv.Itoa(i/256)+"."+strconv.Itoa(i%256)+":443")
	}
	for i := range 700 {
		extra = append(extra, "[2001:db8::"+strconv.FormatInt(int64(i+0x100), 16)+"]:8443")
	}
	blocklist = append(blocklist, "10.0.0.1:443", "[2001:db8::1]:8080")
	write(t, filepath.Join(dir, "blocklist.txt"), []byte(strings.Join(blocklist, "\n")+"\n"))
	write(t, filepath.Join(dir, "extra.txt"), []byte(strings.Join(extra, "\n")+"\n"))

	sh := exec.Command("bash", "-euo", "pipefail", "-c", workflow)
	sh.Dir = dir
	sh.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's workflow fails: %v\n%s\nworkflow:\n%s", err, out, workflow)
	}
	t.Logf("the README's workflow:\n%s", out)

	// The merged filter holds the keys of both lists.
	args := append([]string{"query", "-q", "-funnel", "addrport", "all.bloom"}, blocklist[:100]...)
	query := exec.Command(filepath.Join(bin, "mitzbloom"), append(args, extra[:100]...)...)
	query.Dir = dir
	if out, err := query.CombinedOutput(); err != nil {
		t.Errorf("the merged filter lacks keys of the lists it merges: %v\n%s", err, out)
	}
}
