package bitarray

import (
	"syscall"
	"unsafe"
)

// hugePageSize is the size of a transparent huge page on the platforms Go
// supports (x86-64 and arm64 with 4 KiB base pages).
const hugePageSize = 2 << 20

// adviseHugePages asks the kernel to back words with transparent huge pages
// where it can. A filter is probed at random: past a few megabytes nearly
// every probe misses the TLB, and under virtualization a page walk costs
// more than the cache miss itself. With 2 MiB pages the TLB covers 512 times
// more of the filter. The advice changes no data and is ignored where the
// kernel has huge pages off; only the 2 MiB-aligned interior is advised.
func adviseHugePages(words []uint64) {
	if len(words)*8 < 2*hugePageSize {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
	start := uintptr(unsafe.Pointer(&b[0]))
	lo := (hugePageSize - start%hugePageSize) % hugePageSize
	hi := uintptr(len(b)) - (start+uintptr(len(b)))%hugePageSize
	if hi <= lo {
		return
	}
	b = b[lo:hi]
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}
