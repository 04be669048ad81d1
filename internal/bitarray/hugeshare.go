package bitarray

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// HugePageBytes returns the AnonHugePages of the mappings overlapping [lo, hi),
// each prorated to the part of it inside [lo, hi): smaps tells how much of a
// mapping is huge, not where. It reports false where smaps cannot be
// read. It is for measurements and tests of the memory under an array.
func HugePageBytes(lo, hi uintptr) (int64, bool) {
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
