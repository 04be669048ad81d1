package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// kernelRoutesLocal asks the kernel how it would route a packet to a, as
// `ip route get` does (RTM_GETROUTE over netlink), and reports whether the
// route delivers it to this machine: a local route, which every address of
// an interface has, but also a prefix routed to the machine as a whole
// (`ip route add local 45.45.46.0/24 dev lo`, AnyIP), a broadcast address
// or an anycast one. An address with no route at all (ENETUNREACH and the
// like) is not this machine's: a dial to it fails anyway.
func kernelRoutesLocal(a netip.Addr) (bool, error) {
	family := syscall.AF_INET
	if a.Is6() {
		family = syscall.AF_INET6
	}
	addr := a.AsSlice()
	// struct nlmsghdr, struct rtmsg, then one struct rtattr: RTA_DST.
	const hdr = syscall.SizeofNlMsghdr + syscall.SizeofRtMsg
	req := make([]byte, hdr+syscall.SizeofRtAttr+len(addr))
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], syscall.RTM_GETROUTE)
	ne.PutUint16(req[6:], syscall.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // sequence number
	req[syscall.SizeofNlMsghdr] = byte(family)
	req[syscall.SizeofNlMsghdr+1] = byte(a.BitLen()) // rtm_dst_len
	ne.PutUint16(req[hdr:], uint16(syscall.SizeofRtAttr+len(addr)))
	ne.PutUint16(req[hdr+2:], syscall.RTA_DST)
	copy(req[hdr+syscall.SizeofRtAttr:], addr)

	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.NETLINK_ROUTE)
	if err != nil {
		return false, fmt.Errorf("route lookup: netlink socket: %w", err)
	}
	defer syscall.Close(fd)
	// The kernel answers while it handles the request, so the answer is
	// queued by the time Sendto returns; the timeout is only a guard.
	tv := syscall.Timeval{Sec: 1}
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return false, fmt.Errorf("route lookup: %w", err)
	}
	if err := syscall.Sendto(fd, req, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return false, fmt.Errorf("route lookup: %w", err)
	}
	var buf [4096]byte
	n, _, err := syscall.Recvfrom(fd, buf[:], 0)
	if err != nil {
		return false, fmt.Errorf("route lookup: %w", err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return false, fmt.Errorf("route lookup: %w", err)
	}
	for _, m := range msgs {
		switch m.Header.Type {
		case syscall.NLMSG_ERROR:
			if len(m.Data) < 4 {
				return false, errors.New("route lookup: short netlink error")
			}
			errno := syscall.Errno(-int32(ne.Uint32(m.Data)))
			switch errno {
			case syscall.ENETUNREACH, syscall.EHOSTUNREACH, syscall.EACCES, syscall.EINVAL:
				// No route, an unreachable, prohibit or
				// blackhole route: nothing reaches this
				// machine through it.
				return false, nil
			}
			return false, fmt.Errorf("route lookup of %v: %w", a, errno)
		case syscall.RTM_NEWROUTE:
			if len(m.Data) < syscall.SizeofRtMsg {
				return false, errors.New("route lookup: short rtmsg")
			}
			switch m.Data[7] { // rtm_type
			case syscall.RTN_LOCAL, syscall.RTN_BROADCAST, syscall.RTN_ANYCAST:
				return true, nil
			}
			return false, nil
		}
	}
	return false, fmt.Errorf("route lookup of %v: no route in the kernel's answer", a)
}
