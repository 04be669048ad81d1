//go:build !linux

package main

import "net/netip"

// kernelRoutesLocal reports that no route is known to be local: outside
// Linux, this machine's addresses are those of its interfaces only (see
// interfacePrefixes).
func kernelRoutesLocal(netip.Addr) (bool, error) { return false, nil }
