// Package javatest finds and runs the JDK and Guava for the tests that
// check this module against real Guava.
package javatest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Tools returns the paths of javac, java and the Guava jar (GUAVA_JAR, or
// Debian's /usr/share/java/guava.jar). Without them a test cannot run: in CI
// (CI set) that is a broken setup and Tools fails t; elsewhere it is a
// missing optional dependency and Tools skips t.
func Tools(t testing.TB) (javac, java, guavaJar string) {
	t.Helper()
	var missing []string
	javac, err := exec.LookPath("javac")
	if err != nil {
		missing = append(missing, "javac (no JDK on PATH)")
	}
	java, err = exec.LookPath("java")
	if err != nil {
		missing = append(missing, "java (no JDK on PATH)")
	}
	guavaJar = os.Getenv("GUAVA_JAR")
	if guavaJar == "" {
		guavaJar = "/usr/share/java/guava.jar"
	}
	if _, err := os.Stat(guavaJar); err != nil {
		missing = append(missing, fmt.Sprintf("the Guava jar %s (set GUAVA_JAR to use another)", guavaJar))
	}
	if len(missing) > 0 {
		what := strings.Join(missing, ", ")
		if os.Getenv("CI") != "" {
			t.Fatalf("Java interop test cannot run in CI: missing %s; .ci/run installs openjdk-17-jdk-headless and libguava-java", what)
		}
		t.Skipf("skipping the Java interop test: missing %s; to run it, install the Debian packages openjdk-17-jdk-headless and libguava-java", what)
	}
	return javac, java, guavaJar
}

// run runs a JDK tool and returns its standard output, failing t with its
// standard error, and the end of its output, if it fails.
func run(ctx context.Context, t testing.TB, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		out := stdout.String()
		out = out[max(0, len(out)-2000):]
		t.Fatalf("%s %s: %v\nstderr:\n%s\nstdout (last 2000 bytes):\n%s", name, strings.Join(args, " "), err, stderr.String(), out)
	}
	return stdout.String()
}

// Program compiles the Java sources against Guava and runs their class
// main with args, returning its standard output. Like Tools, it skips t, or
// fails it in CI, when the JDK or Guava is missing; like run, it fails t if
// either step fails. A JVM that hangs fails t after two minutes rather than
// holding the test until the global timeout.
func Program(t testing.TB, sources []string, main string, args ...string) string {
	t.Helper()
	javac, java, guavaJar := Tools(t)
	classes := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run(ctx, t, javac, append([]string{"-encoding", "UTF-8", "-cp", guavaJar, "-d", classes}, sources...)...)
	return run(ctx, t, java, append([]string{"-cp", classes + string(filepath.ListSeparator) + guavaJar, main}, args...)...)
}
