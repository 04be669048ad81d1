//go:build !linux

package main

import "net"

// newSpliceCopier returns nil: outside Linux, tunnels copy through pooled
// buffers (bufferCopier).
func newSpliceCopier(dst, src *net.TCPConn) copier { return nil }
