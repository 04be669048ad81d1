package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSerialSmall runs the command on filters of 64 KiB and 128 KiB, one
// round, without Java, so that a broken measurement fails here rather than
// in someone's run: every operation must time something, and the report
// must hold every table.
func TestSerialSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and the tool")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "serial")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-sizes", "64KiB", "-open", "128KiB", "-rounds", "1", "-nojava", "-dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("serial: %v\n%s", err, out)
	}
	report := string(out)
	for _, want := range []string{
		"### A filter of 64 KiB", "### A filter of 128 KiB", "| " + opReadFrom + " |", "| " + opWriteTo + " | " + opCopy + " |",
		"| " + opInspect + " |", "| after BitCount, which reads every page |", "| process 2 |",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"64MiB": 64 << 20, "1GiB": 1 << 30, " 8KiB": 8 << 10, "16": 16} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-8", "7", "1MB", "x"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}
