package bitarray

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestHugePageAdvice requires a large array's memory to be advised for
// transparent huge pages: /proc/self/smaps shows the "hg" flag on a mapping
// inside it. A small array is left alone.
func TestHugePageAdvice(t *testing.T) {
	a := New(1 << 20) // 8 MiB
	start := uintptr(unsafe.Pointer(&a.words[0]))
	if !advised(t, start, start+8<<20) {
		t.Error("no mapping of an 8 MiB array is advised MADV_HUGEPAGE")
	}
}

// advised reports whether a mapping overlapping [lo, hi) has the "hg"
// (MADV_HUGEPAGE) flag.
func advised(t *testing.T, lo, hi uintptr) bool {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps to check: %v", err)
	}
	defer f.Close()
	inside := false
	for s := bufio.NewScanner(f); s.Scan(); {
		line := s.Text()
		var from, to uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &from, &to); n == 2 {
			inside = from < hi && lo < to
			continue
		}
		if inside && strings.HasPrefix(line, "VmFlags:") && strings.Contains(line+" ", " hg ") {
			return true
		}
	}
	return false
}
