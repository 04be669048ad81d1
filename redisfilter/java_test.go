package redisfilter_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/internal/redistest"
)

// guavaJar is the Guava jar the Java side of the tests runs against:
// GUAVA_JAR, or Debian's.
func guavaJar() string {
	if jar := os.Getenv("GUAVA_JAR"); jar != "" {
		return jar
	}
	return "/usr/share/java/guava.jar"
}

// runGuava compiles the Java source src against Guava and runs its class
// main with args, returning its standard output. Without a JDK or Guava
// the test skips, or fails in CI, as it does without Redis; a JVM that
// hangs fails it after two minutes. (The library's tests do the same with
// its internal javatest, which this module does not import: it stands on
// the library's public API alone.)
func runGuava(ctx context.Context, t *testing.T, src, main string, args ...string) string {
	t.Helper()
	jar := guavaJar()
	_, err := os.Stat(jar)
	for _, tool := range []string{"javac", "java"} {
		if err == nil {
			_, err = exec.LookPath(tool)
		}
	}
	if err != nil {
		const install = "the Debian packages openjdk-17-jdk-headless and libguava-java (or GUAVA_JAR)"
		if redistest.IsCI() {
			t.Fatalf("Java interop test cannot run in CI: %v; .ci/run installs %s", err, install)
		}
		t.Skipf("skipping the Java interop test: %v; to run it, install %s", err, install)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	classes := t.TempDir()
	java := func(name string, args ...string) string {
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\nstderr:\n%s", name, strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String()
	}
	java("javac", "-encoding", "UTF-8", "-cp", jar, "-d", classes, src)
	return java("java", append([]string{"-cp", classes + string(filepath.ListSeparator) + jar, main}, args...)...)
}
