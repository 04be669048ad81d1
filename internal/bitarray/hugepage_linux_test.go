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

// TestHugePagesOfWrittenMemory requires memory that was written before its
// advice, as make writes the memory the Go heap hands out again, to end up
// on huge pages: MADV_COLLAPSE moves it there. It skips where the kernel
// cannot (before Linux 6.1, huge pages off, none free).
func TestHugePagesOfWrittenMemory(t *testing.T) {
	w := make([]uint64, 4*hugePageSize/8) // 8 MiB
	for i := range w {
		w[i] = uint64(i) // in base pages: nothing advised them yet
	}
	if err := adviseHugePages(WordBytes(w)); err != nil {
		t.Skipf("MADV_COLLAPSE: %v", err)
	}
	lo := uintptr(unsafe.Pointer(&w[0]))
	hi := lo + uintptr(len(w))*8
	// The 2 MiB-aligned interior holds at least 3 of the 4 huge pages.
	huge, ok := hugePageBytes(lo, hi)
	if !ok {
		t.Skip("no /proc/self/smaps to check")
	}
	if huge < 3*hugePageSize {
		t.Errorf("%d KiB of 8 MiB on huge pages after MADV_COLLAPSE; want at least 6 MiB", huge>>10)
	}
	for i := range w {
		if w[i] != uint64(i) {
			t.Fatalf("word %d changed to %d", i, w[i])
		}
	}
}

// hugePageBytes returns the AnonHugePages of the mappings overlapping [lo, hi),
// each prorated to the part of it inside [lo, hi): smaps tells how much of a
// mapping is huge, not where. It reports false where smaps cannot be
// read.
func hugePageBytes(lo, hi uintptr) (int64, bool) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var total int64
	var from, to uintptr
	inside := false
	for s := bufio.NewScanner(f); s.Scan(); {
		line := s.Text()
		// A field such as "AnonHugePages:" scans as one hex number, A.
		var a, b uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &a, &b); n == 2 {
			from, to = a, b
			inside = from < hi && lo < to
			continue
		}
		if !inside || !strings.HasPrefix(line, "AnonHugePages:") {
			continue
		}
		var kb int64
		if _, err := fmt.Sscanf(strings.TrimPrefix(line, "AnonHugePages:"), "%d", &kb); err != nil {
			continue
		}
		overlap := min(hi, to) - max(lo, from)
		total += kb << 10 * int64(overlap) / int64(to-from)
	}
	return total, true
}
