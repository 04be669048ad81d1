package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	dep := func(path, version string, replace *debug.Module) *debug.Module {
		return &debug.Module{Path: path, Version: version, Replace: replace}
	}
	for _, c := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"installed", debug.BuildInfo{GoVersion: "go1.26.1", Main: *dep(modulePath, "v1.2.3", nil)},
			"mitzbloom v1.2.3 go1.26.1"},
		{"a commit", debug.BuildInfo{GoVersion: "go1.26.1", Main: *dep(modulePath, "v1.2.4-0.20260102030405-0123456789ab", nil)},
			"mitzbloom v1.2.4-0.20260102030405-0123456789ab go1.26.1"},
		{"a clone", debug.BuildInfo{GoVersion: "go1.26.1", Main: *dep(modulePath, "(devel)", nil),
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0da103a"}, {Key: "vcs.modified", Value: "true"}}},
			"mitzbloom (devel) (commit 0da103a, modified) go1.26.1"},
		{"a clone, clean", debug.BuildInfo{GoVersion: "go1.26.1", Main: *dep(modulePath, "(devel)", nil),
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0da103a"}, {Key: "vcs.modified", Value: "false"}}},
			"mitzbloom (devel) (commit 0da103a) go1.26.1"},
		{"no VCS", debug.BuildInfo{GoVersion: "go1.26.1", Main: *dep(modulePath, "", nil)},
			"mitzbloom (devel) go1.26.1"},
		{"a dependency", debug.BuildInfo{GoVersion: "go1.26.1", Main: *dep("example.com/tools", "(devel)", nil),
			Deps: []*debug.Module{dep("github.com/bits-and-blooms/bitset", "v1.29.0", nil), dep(modulePath, "v1.3.0", nil)}},
			"mitzbloom v1.3.0 go1.26.1"},
		{"replaced", debug.BuildInfo{GoVersion: "go1.26.1", Main: *dep("example.com/tools", "(devel)", nil),
			Deps: []*debug.Module{dep(modulePath, "v1.3.0", dep("../mitzbloom", "(devel)", nil))}},
			"mitzbloom v1.3.0 => ../mitzbloom go1.26.1"},
		{"replaced by a fork", debug.BuildInfo{GoVersion: "go1.26.1", Main: *dep("example.com/tools", "(devel)", nil),
			Deps: []*debug.Module{dep(modulePath, "v1.3.0", dep("example.com/fork", "v1.3.1", nil))}},
			"mitzbloom v1.3.0 => example.com/fork v1.3.1 go1.26.1"},
		{"installed from a replaced main module", debug.BuildInfo{GoVersion: "go1.26.1", Main: *dep(modulePath, "v1.2.3", dep("/src/mitzbloom", "(devel)", nil))},
			"mitzbloom v1.2.3 => /src/mitzbloom go1.26.1"},
		{"absent", debug.BuildInfo{GoVersion: "go1.26.1", Main: *dep("example.com/tools", "(devel)", nil)},
			"mitzbloom (unknown) go1.26.1"},
	} {
		if got := versionLine(&c.info); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// goVersionM returns what "go version -m" reads from the binary at path:
// the Go version, and the version of the module path, as the main module
// or a dependency.
func goVersionM(t *testing.T, bin, path string) (goVersion, version string) {
	t.Helper()
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m %s: %v", bin, err)
	}
	lines := strings.Split(string(out), "\n")
	_, goVersion, _ = strings.Cut(lines[0], ": ")
	for _, l := range lines[1:] {
		f := strings.Split(strings.TrimSpace(l), "\t")
		if len(f) >= 3 && (f[0] == "mod" || f[0] == "dep") && f[1] == path {
			version = f[2]
		}
	}
	return goVersion, version
}

// TestVersion runs "mitzbloom version" on binaries built as a clone builds
// them, where the module is the main one, and as a module that requires a
// release builds them, and requires what it prints to be what
// "go version -m" reads from the same binary.
func TestVersion(t *testing.T) {
	goVersion, version := goVersionM(t, binPath, modulePath)
	if version == "" {
		t.Fatalf("go version -m %s shows no module %s", binPath, modulePath)
	}
	// A build in a clone may add the commit after the version.
	res := mustRun(t, "", "version")
	if !strings.HasPrefix(res.stdout, "mitzbloom "+version) || !strings.HasSuffix(res.stdout, " "+goVersion+"\n") {
		t.Errorf("mitzbloom version printed %q; go version -m reads %s %s", res.stdout, version, goVersion)
	}

	if testing.Short() {
		t.Skip("builds the command once more; the run without -short does")
	}
	// A module that requires release v1.2.3, which this checkout stands
	// in for, and builds the command from it: the go command records the
	// module of the command as the main one, replaced by the checkout.
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod := "module example.com/tools\n\ngo 1.24\n\nrequire " + modulePath + " v1.2.3\n\nreplace " + modulePath + " v1.2.3 => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "mitzbloom")
	build := exec.Command("go", "build", "-o", bin, modulePath+"/cmd/mitzbloom")
	build.Dir = dir
	// -mod=mod lets the go command add the library's own requirements.
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the command as a dependency: %v\n%s", err, out)
	}
	goVersion, version = goVersionM(t, bin, modulePath)
	if version != "v1.2.3" {
		t.Fatalf("go version -m reads version %q of %s, want v1.2.3", version, modulePath)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("mitzbloom version: %v", err)
	}
	if want := "mitzbloom v1.2.3 => " + root + " " + goVersion + "\n"; string(out) != want {
		t.Errorf("mitzbloom version printed %q, want %q", out, want)
	}
}
