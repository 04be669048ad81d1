package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY opens a pseudo-terminal and returns its two ends: what a program
// writes to the terminal end can be read from the controller.
func openPTY(t *testing.T) (controller, terminal *os.File) {
	t.Helper()
	controller, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		// Every Linux CI runner has them; a sandbox without them only
		// cannot run this test.
		if os.Getenv("CI") != "" {
			t.Fatalf("no pseudo-terminals in CI: %v", err)
		}
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { controller.Close() })
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, controller.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		t.Fatalf("unlocking the pseudo-terminal: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, controller.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		t.Fatalf("naming the pseudo-terminal: %v", errno)
	}
	terminal, err = os.OpenFile("/dev/pts/"+strconv.FormatUint(uint64(n), 10), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { terminal.Close() })
	return controller, terminal
}

// TestProgressOnTerminal runs build with its standard error on a terminal:
// it shows progress there, and with -q it does not.
func TestProgressOnTerminal(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 1000 {
		lines = append(lines, "key"+strconv.Itoa(i))
	}
	input := writeLines(t, dir, "keys.txt", lines)
	for _, quiet := range []bool{false, true} {
		controller, terminal := openPTY(t)
		args := []string{"build", "-p", "0.01", "-o", filepath.Join(dir, "f.bin"), input}
		if quiet {
			args = append(args, "-q")
		}
		cmd := exec.Command(binPath, args...)
		cmd.Stderr = terminal
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if err := cmd.Run(); err != nil {
			t.Fatalf("build: %v", err)
		}
		// Closing our copy of the terminal end makes the controller read
		// EOF (EIO on Linux) once the output is drained.
		terminal.Close()
		out, _ := io.ReadAll(controller)
		shown := string(out)
		switch {
		case quiet && shown != "":
			t.Errorf("build -q showed %q on the terminal", shown)
		case !quiet && !strings.Contains(shown, "1000 keys, ") || !quiet && !strings.Contains(shown, "100%"):
			t.Errorf("build showed %q on the terminal, want its progress: 1000 keys, 100%%", shown)
		}
	}
}
