package bitarray

import (
	"syscall"
	"unsafe"
)

// madvCollapse is Linux's MADV_COLLAPSE (6.1 and later), which package
// syscall does not name.
const madvCollapse = 25

// hugePageSize is the size of a transparent huge page on the platforms Go
// supports (x86-64 and arm64 with 4 KiB base pages).
const hugePageSize = 2 << 20

// adviseHugePages asks the kernel to back b with transparent huge pages
// where it can. A filter is probed at random: past a few megabytes nearly
// every probe misses the TLB, and under virtualization a page walk costs
// more than the cache miss itself. With 2 MiB pages the TLB covers 512 times
// more of the filter. The advice changes no data and is ignored where the
// kernel has huge pages off; only the 2 MiB-aligned interior is advised.
//
// The advice covers only pages faulted in after it, and memory that the Go
// heap hands out again has been faulted in already, in 4 KiB pages, by make
// zeroing it (as have words decoded from a stream or copied), so such a
// filter can have none of its memory on huge pages. MADV_COLLAPSE moves the
// pages already there onto huge pages at once and skips the ranges nothing
// has touched yet. bench/results/choices.md has what it costs and what it
// changed, and bench's limits report shows the share on huge pages of its
// memory, which it allocates this way. Kernels before 6.1 reject it; the
// kernel's background collapsing is then all there is.
//
// It returns MADV_COLLAPSE's error, for tests: callers have nothing to do
// about it.
func adviseHugePages(b []byte) error {
	if len(b) < 2*hugePageSize {
		return nil
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	lo := (hugePageSize - start%hugePageSize) % hugePageSize
	hi := uintptr(len(b)) - (start+uintptr(len(b)))%hugePageSize
	if hi <= lo {
		return nil
	}
	b = b[lo:hi]
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	return syscall.Madvise(b, madvCollapse)
}

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (5.14 and later), which
// package syscall does not name.
const madvPopulateWrite = 23

// populate asks the kernel to map in, writable, the pages of b that are not
// mapped yet, at once and in a system call: a goroutine that then writes b
// takes no page faults. The garbage collector waits, to stop the world, for
// a goroutine in a page fault, which on a huge page can take the kernel
// milliseconds of compaction, but not for one in a system call. Kernels
// before 5.14 reject the advice, and the pages are then faulted in as they
// are written.
func populate(b []byte) {
	if len(b) > 0 {
		_ = syscall.Madvise(b, madvPopulateWrite)
	}
}
