package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The test binary runs the program itself, as main, when childEnv is set:
// the tests below start it in a process of its own, with a limit of its own
// on open files when childNofileEnv is set too.
const (
	childEnv       = "CONNECTPROXY_TEST_MAIN"
	childNofileEnv = "CONNECTPROXY_TEST_NOFILE"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if n := os.Getenv(childNofileEnv); n != "" {
			nofile, err := strconv.ParseUint(n, 10, 64)
			if err == nil {
				err = setOpenFileLimit(nofile)
			}
			if err != nil {
				os.Stderr.WriteString("setting the open file limit: " + err.Error() + "\n")
				os.Exit(3)
			}
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child is the program running in a process of its own.
type child struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer // its standard error
	done chan struct{}
}

// startChild starts the program with args, and env besides the test's.
func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(os.Args[0], args...), done: make(chan struct{})}
	c.cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	stderr, err := c.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start())
	go func() {
		defer close(c.done)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			c.mu.Lock()
			c.logs.Write(append(lines.Bytes(), '\n'))
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
	})
	return c
}

// wait waits for the program to end and returns its exit status.
func (c *child) wait() int {
	<-c.done
	_ = c.cmd.Wait()
	return c.cmd.ProcessState.ExitCode()
}

func (c *child) log() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logs.String()
}

// listening waits for the program's first log line and returns the values
// of its attributes.
func (c *child) listening(t *testing.T) map[string]string {
	t.Helper()
	require.Eventually(t, func() bool { return bytes.Contains([]byte(c.log()), []byte("msg=listening")) }, hangGuard, 5*time.Millisecond, "log so far: %s", c.log())
	line := regexp.MustCompile(`.*msg=listening.*`).FindString(c.log())
	attrs := map[string]string{}
	for _, m := range regexp.MustCompile(`([a-z-]+)=("[^"]*"|\S+)`).FindAllStringSubmatch(line, -1) {
		attrs[m[1]] = m[2]
	}
	return attrs
}
