package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
	"unsafe"
)

// makeWords returns words zero words allocated as the library's internal
// bitarray allocates a filter's, so that the limits are measured over the
// memory a filter sees: from the Go heap, its 2 MiB-aligned interior
// advised for transparent huge pages and, since memory the heap hands out
// again was written already in base pages, collapsed onto huge pages with
// MADV_COLLAPSE (Linux 6.1 and later; ignored before). The module stands
// on the library's public API alone, so this repeats what bitarray does.
func makeWords(words int) []uint64 {
	const hugePage = 2 << 20
	w := make([]uint64, words)
	if len(w)*8 < 2*hugePage {
		return w
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(w)*8)
	start := uintptr(unsafe.Pointer(&b[0]))
	lo := (hugePage - start%hugePage) % hugePage
	hi := uintptr(len(b)) - (start+uintptr(len(b)))%hugePage
	if hi > lo {
		const madvCollapse = 25 // which package syscall does not name
		_ = syscall.Madvise(b[lo:hi], syscall.MADV_HUGEPAGE)
		_ = syscall.Madvise(b[lo:hi], madvCollapse)
	}
	return w
}

// hugePageBytes returns the AnonHugePages of the mappings that overlap
// [lo, hi) in /proc/self/smaps, each prorated to its part inside [lo, hi),
// since smaps tells how much of a mapping is on huge pages but not where.
// It reports false where smaps cannot be read.
func hugePageBytes(lo, hi uintptr) (int64, bool) {
	smaps, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, false
	}
	defer smaps.Close()
	var total int64
	var from, to uintptr
	for s := bufio.NewScanner(smaps); s.Scan(); {
		// A mapping's first line begins with its range; a field such as
		// "AnonHugePages:" scans as one hex number, A, and no range.
		var a, b uintptr
		if n, _ := fmt.Sscanf(s.Text(), "%x-%x ", &a, &b); n == 2 {
			from, to = a, b
			continue
		}
		rest, ok := strings.CutPrefix(s.Text(), "AnonHugePages:")
		if !ok || from >= hi || to <= lo {
			continue
		}
		var kb int64
		if _, err := fmt.Sscanf(rest, "%d", &kb); err == nil {
			total += kb << 10 * int64(min(hi, to)-max(lo, from)) / int64(to-from)
		}
	}
	return total, true
}
