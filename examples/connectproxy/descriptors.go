package main

import "fmt"

// The descriptor budget: the process's limit on open files (RLIMIT_NOFILE)
// is shared by client connections, tunnels and the proxy's own needs, and
// the caps are set so that the sum always fits.
const (
	// reservedFDs are kept for the proxy itself: standard input, output
	// and error, its listeners, the runtime's poller, the resolver's
	// configuration files, listing the interfaces, the netlink sockets
	// of route lookups (4), the empty pipes kept for splicing (8, of two
	// descriptors each), and some to spare.
	reservedFDs = 64
	// fdsPerTunnel are a tunnel's descriptors besides its client
	// connection, at most: while it is being opened, the two DNS queries
	// (A and AAAA) it may wait on, then two connection attempts
	// (maxAttempts); once open, its connection to the destination and,
	// while bytes move, a pipe (two descriptors) for each direction's
	// splice (spliceCopier).
	fdsPerTunnel = 5
	// adminConns caps the connections of an -admin listener.
	adminConns = 16
	// defaultTunnels and maxDefaultConns bound the caps derived from a
	// large limit: memory, not descriptors, bounds them there.
	defaultTunnels  = 1024
	maxDefaultConns = 16384
)

// budget returns the caps on tunnels and on client connections that fit in
// nofile descriptors, with an -admin listener if admin. A cap of 0 is
// derived: tunnels take up to half of what is left after reservedFDs,
// connections the rest. It returns an error when the caps given do not fit.
func budget(nofile int, admin bool, tunnels, conns int) (int, int, error) {
	avail := nofile - reservedFDs
	if admin {
		avail -= adminConns
	}
	if tunnels == 0 {
		tunnels = min(defaultTunnels, avail/(2*fdsPerTunnel))
	}
	if conns == 0 {
		conns = min(maxDefaultConns, avail-fdsPerTunnel*tunnels)
	}
	if tunnels < 1 || conns < 1 || conns+fdsPerTunnel*tunnels > avail {
		return 0, 0, fmt.Errorf("%d connections and %d tunnels need %d descriptors besides the %d the proxy keeps, and the limit (ulimit -n) is %d",
			max(conns, 1), max(tunnels, 1), max(conns, 1)+fdsPerTunnel*max(tunnels, 1), nofile-avail, nofile)
	}
	return tunnels, conns, nil
}
