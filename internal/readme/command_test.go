package readme

import (
	"encoding/json"
	"go/version"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mitzbloom/mitzbloom/internal/redistest"
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
	root, readme := readREADME(t, "README.md")
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

// TestREADMETestCommand checks that the README's test command names every
// module of go.work, and that .ci/run runs it as written, with and without
// the race detector: ./... stops at a module's boundary, so a module left
// out of the command is tested nowhere.
func TestREADMETestCommand(t *testing.T) {
	root, readme := readREADME(t, "README.md")
	out, err := exec.Command("go", "work", "edit", "-json", filepath.Join(root, "go.work")).Output()
	if err != nil {
		t.Fatalf("go work edit -json: %v", err)
	}
	var work struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal(out, &work); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, u := range work.Use {
		want = append(want, "./"+path.Join(filepath.ToSlash(u.DiskPath), "..."))
	}

	var patterns []string
	for _, b := range shBlock.FindAllSubmatch(readme, -1) {
		for _, l := range strings.Split(string(b[1]), "\n") {
			cmd, _, _ := strings.Cut(l, "#")
			f := strings.Fields(cmd)
			if len(f) > 2 && f[0] == "go" && f[1] == "test" && !strings.HasPrefix(f[2], "-") {
				patterns = f[2:]
			}
		}
	}
	if patterns == nil {
		t.Fatal("README.md has no sh block with a go test command of packages alone")
	}
	got := slices.Sorted(slices.Values(patterns))
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("README.md's test command tests %q; go.work's modules are %q", got, want)
	}

	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	for _, flags := range []string{"-race -short -count=1", "-count=1"} {
		line := "go test " + flags + " " + strings.Join(patterns, " ")
		if !slices.Contains(strings.Split(string(ci), "\n"), line) {
			t.Errorf(".ci/run has no line %q", line)
		}
	}
}

// fence matches a fenced block of a README, of any language.
var fence = regexp.MustCompile("(?ms)^```[a-z]*\n(.*?)^```\n")

// TestREADMEACLLines checks the ACL commands of the READMEs, which users
// paste into redis-cli: in a fenced block that has one, every line must be
// a whole ACL SETUSER command, since redis-cli runs each line on its own and
// a command wrapped onto two lines makes half a user and an error. With
// redis-server and redis-cli on the PATH it runs each on a throwaway
// server, where each must answer OK.
func TestREADMEACLLines(t *testing.T) {
	var lines []string
	for _, name := range []string{"README.md", "redisfilter/README.md"} {
		_, readme := readREADME(t, name)
		for _, b := range fence.FindAllSubmatch(readme, -1) {
			block := strings.Split(strings.TrimSuffix(string(b[1]), "\n"), "\n")
			if !slices.ContainsFunc(block, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "ACL ") }) {
				continue
			}
			for _, l := range block {
				switch {
				case strings.TrimSpace(l) == "":
				case !strings.HasPrefix(l, "ACL SETUSER ") || strings.HasSuffix(l, "\\"):
					t.Errorf("%s: a block of ACL commands has a line that is not a whole ACL SETUSER command, which redis-cli would run on its own: %q", name, l)
				default:
					lines = append(lines, l)
				}
			}
		}
	}
	if len(lines) == 0 {
		t.Fatal("no ACL SETUSER line in a fenced block of the READMEs: the read-only user's command is missing")
	}

	srv := redistest.New(t)
	for _, l := range lines {
		cli := redistest.CLICommand("-s", srv.Socket())
		cli.Stdin = strings.NewReader(l + "\n")
		out, err := cli.CombinedOutput()
		if err != nil || string(out) != "OK\n" {
			t.Errorf("redis-cli answers %q (%v) to the README's\n%s", out, err, l)
		}
	}
}

// cloneLine is the README's first step before a release, which the test
// stands in for with a link to this checkout, having no network.
const cloneLine = "git clone https://github.com/mitzbloom/mitzbloom ../mitzbloom"

// TestREADMEInstall runs the README's steps for using the modules before a
// release, as written, in a module of a user's that imports the library
// and redisfilter, beside a link to this checkout in place of the clone:
// the program must then build and run, and go install must install the
// command-line tool, with the go command asking no server for a version of
// mitzbloom, since none is published.
func TestREADMEInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; the run without -short runs the steps")
	}
	root, readme := readREADME(t, "README.md")
	// The steps require redisfilter, whose go.mod may ask for a newer Go
	// than the oldest the library's tests run with.
	if need, old := goTooOldForRedisfilter(t, root); old {
		t.Skipf("redisfilter requires %s, and this is %s", need, runtime.Version())
	}
	var steps string
	for _, b := range shBlock.FindAllSubmatch(readme, -1) {
		if strings.HasPrefix(string(b[1]), cloneLine+"\n") {
			steps = strings.TrimPrefix(string(b[1]), cloneLine+"\n")
		}
	}
	if steps == "" {
		t.Fatalf("README.md has no sh block that begins %q, the steps before a release", cloneLine)
	}

	dir := t.TempDir()
	if err := os.Symlink(root, filepath.Join(dir, "mitzbloom")); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(app, "go.mod"), []byte("module example.com/app\n\ngo 1.24\n"))
	// The checksums of the modules' dependencies, which a user's go
	// command would fetch: the test needs no network.
	var sum []byte
	for _, mod := range []string{".", "redisfilter"} {
		b, err := os.ReadFile(filepath.Join(root, mod, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		sum = append(sum, b...)
	}
	write(t, filepath.Join(app, "go.sum"), sum)
	write(t, filepath.Join(app, "main.go"), []byte(`package main

import (
	"fmt"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

func main() {
	f, err := bloom.New(funnel.String, 100, 0.01)
	if err != nil {
		panic(err)
	}
	f.Put("x")
	fmt.Println(f.MightContain("x"), redisfilter.ErrLost != nil)
}
`))
	bin := filepath.Join(dir, "bin")
	// Nothing may fetch mitzbloom from a server: no proxy or checksum
	// database is asked for it, and no version control system may run, so
	// a step that asked for a version of mitzbloom would fail, as it does
	// for a user before the first release. The other modules come as they
	// do for a user, from the module cache or the module proxy: go mod
	// tidy also wants the modules that the tests of go-redis import, which
	// no build of this repository downloads.
	env := append(os.Environ(), "GOWORK=off", "GOBIN="+bin, "GOFLAGS=",
		"GONOPROXY=github.com/mitzbloom", "GONOSUMDB=github.com/mitzbloom", "GOVCS=*:off")
	sh := exec.Command("bash", "-euo", "pipefail", "-c", steps)
	sh.Dir, sh.Env = app, env
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the README's steps before a release fail: %v\n%s\nsteps:\n%s", err, out, steps)
	}
	run := exec.Command("go", "run", ".")
	run.Dir, run.Env = app, env
	if out, err := run.CombinedOutput(); err != nil || string(out) != "true true\n" {
		t.Errorf("a program of the module set up so: %v\n%s", err, out)
	}
	if out, err := exec.Command(filepath.Join(bin, "mitzbloom"), "-h").CombinedOutput(); err != nil {
		t.Errorf("the mitzbloom that go install installed: %v\n%s", err, out)
	}
}

// goTooOldForRedisfilter returns the Go that redisfilter's go.mod requires,
// and whether this Go is older: with it, as in CI's pass with the oldest Go
// the library accepts, code that uses redisfilter does not build.
func goTooOldForRedisfilter(t *testing.T, root string) (need string, old bool) {
	t.Helper()
	rf, err := os.ReadFile(filepath.Join(root, "redisfilter", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(rf)
	if m == nil {
		t.Fatal("redisfilter/go.mod has no go line")
	}
	need = "go" + string(m[1])
	return need, version.Compare(runtime.Version(), need) < 0
}
