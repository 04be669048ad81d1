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
	req[syscall.SizeofNlMsghdr] = byte(family)
	req[syscall.SizeofNlMsghdr+1] = byte(a.BitLen()) // rtm_dst_len
	ne.PutUint16(req[hdr:], uint16(syscall.SizeofRtAttr+len(addr)))
	ne.PutUint16(req[hdr+2:], syscall.RTA_DST)
	copy(req[hdr+syscall.SizeofRtAttr:], addr)

	rs, err := getRouteSocket()
	if err != nil {
		return false, fmt.Errorf("route lookup: netlink socket: %w", err)
	}
	msgs, err := rs.ask(req)
	if err != nil {
		rs.close()
		return false, fmt.Errorf("route lookup: %w", err)
	}
	defer putRouteSocket(rs)
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

// A routeSocket is a netlink socket kept for the next lookup, which saves
// opening and closing one each time, and its receive buffer.
type routeSocket struct {
	fd  int
	seq uint32
	buf [4096]byte
}

// routeSockets are the sockets not in use, up to their capacity; the
// descriptor budget's reservedFDs has room for them.
var routeSockets = make(chan *routeSocket, 4)

func getRouteSocket() (*routeSocket, error) {
	select {
	case rs := <-routeSockets:
		return rs, nil
	default:
	}
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.NETLINK_ROUTE)
	if err != nil {
		return nil, err
	}
	// The kernel answers while it handles the request, so the answer is
	// queued by the time Sendto returns; the timeout is only a guard.
	tv := syscall.Timeval{Sec: 1}
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &routeSocket{fd: fd}, nil
}

func putRouteSocket(rs *routeSocket) {
	select {
	case routeSockets <- rs:
	default:
		rs.close()
	}
}

func (rs *routeSocket) close() { syscall.Close(rs.fd) }

// ask sends req, a netlink message, with a sequence number of its own, and
// returns the answer to it, skipping any answer to an earlier request that
// came too late for it.
func (rs *routeSocket) ask(req []byte) ([]syscall.NetlinkMessage, error) {
	rs.seq++
	binary.NativeEndian.PutUint32(req[8:], rs.seq)
	if err := syscall.Sendto(rs.fd, req, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return nil, err
	}
	for {
		n, _, err := syscall.Recvfrom(rs.fd, rs.buf[:], 0)
		if err != nil {
			return nil, err
		}
		msgs, err := syscall.ParseNetlinkMessage(rs.buf[:n])
		if err != nil {
			return nil, err
		}
		if len(msgs) > 0 && msgs[0].Header.Seq == rs.seq {
			return msgs, nil
		}
	}
}
