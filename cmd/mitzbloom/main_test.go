package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// binPath is the command, built once by TestMain, which the tests run as a
// user would.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mitzbloom-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "mitzbloom")
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Stderr = os.Stderr
	status := 1
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the command:", err)
	} else {
		status = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(status)
}

// result is what a run of the command did.
type result struct {
	stdout, stderr string
	status         int
}

func (r result) String() string {
	return fmt.Sprintf("exit status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
}

// mitzbloom runs the command with stdin as its standard input.
func mitzbloom(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.status = exit.ExitCode()
	case err != nil:
		t.Fatalf("running mitzbloom %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// mustRun runs the command and fails t unless it exits with status 0.
func mustRun(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	r := mitzbloom(t, stdin, args...)
	if r.status != exitOK {
		t.Fatalf("mitzbloom %s: %v", strings.Join(args, " "), r)
	}
	return r
}

// writeLines writes lines to a new file in dir, each ended by "\n".
func writeLines(t *testing.T, dir, name string, lines []string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
