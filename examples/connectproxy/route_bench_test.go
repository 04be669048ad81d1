package main

import (
	"net/netip"
	"testing"
)

// BenchmarkRouteLookup asks the kernel for one address's route, as each
// tunnel does for each address it may dial unless -allow-machine.
func BenchmarkRouteLookup(b *testing.B) {
	a := netip.MustParseAddr("198.51.100.1")
	b.ReportAllocs()
	for range b.N {
		if _, err := kernelRoutesLocal(a); err != nil {
			b.Fatal(err)
		}
	}
}
