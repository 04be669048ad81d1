package funnel_test

import (
	"encoding/hex"
	"fmt"
	"log"
	"net"
	"net/netip"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// Conn is a key with more than one field.
type Conn struct {
	Client string
	Port   int32
}

// The Java Funnel that matches connFunnel, so that both build the same filter:
//
//	Funnel<Conn> connFunnel = (conn, into) -> into
//	    .putInt(conn.client.length())   // a length before a variable-length field
//	    .putString(conn.client, UTF_8)
//	    .putInt(conn.port);
//
// (conn.client.length() counts UTF-16 units in Java; the Go side must feed
// the same number, so this example keeps clients to ASCII.)
var connFunnel = funnel.Func[Conn](func(c Conn, into funnel.Sink) {
	into.PutInt32(int32(len(c.Client)))
	into.PutString(c.Client)
	into.PutInt32(c.Port)
})

func ExampleFunc() {
	seen, err := bloom.New(connFunnel, 10000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	seen.Put(Conn{"alice", 443})
	fmt.Println(seen.MightContain(Conn{"alice", 443}))
	fmt.Println(seen.MightContain(Conn{"alice", 80}))
	fmt.Println(hex.EncodeToString(funnel.Append(nil, connFunnel, Conn{"alice", 443})))
	// Output:
	// true
	// false
	// 05000000616c696365bb010000
}

// A funnel made from a function has no identity of its own: filters of two
// processes, or of two calls of one factory, could not tell whether their
// funnels feed the same bytes. A name says they do, and the filters combine.
func ExampleNamed() {
	conns := funnel.Named("conn/v1", connFunnel)
	here, err := bloom.New(conns, 10000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	there, err := bloom.New(funnel.Named("conn/v1", connFunnel), 10000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	there.Put(Conn{"bob", 443})
	fmt.Println(here.PutAll(there), here.MightContain(Conn{"bob", 443}))

	other, err := bloom.New(funnel.Named("conn/v2", connFunnel), 10000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(here.PutAll(other))
	fmt.Println(here)
	// Output:
	// <nil> true
	// bloom: incompatible filters: filters must have equal funnels (conn/v1 != conn/v2)
	// bloom.Filter{conn/v1 MURMUR128_MITZ_64 95872 bits, 7 hash functions}
}

func ExampleSequential() {
	// Guava's Funnels.sequentialFunnel(Funnels.longFunnel()) for a List<Long>.
	path := funnel.Sequential(funnel.Int64)
	fmt.Println(hex.EncodeToString(funnel.Append(nil, path, []int64{1, 2})))
	// Output:
	// 01000000000000000200000000000000
}

func Example_addr() {
	// One address, three ways to hold it; Java's
	// InetAddress.getByName("::ffff:192.0.2.1") is an Inet4Address too.
	v4 := netip.MustParseAddr("192.0.2.1")
	mapped := netip.MustParseAddr("::ffff:192.0.2.1")
	ip := net.ParseIP("192.0.2.1") // 16 bytes, IPv4-mapped
	fmt.Println(hex.EncodeToString(funnel.Append(nil, funnel.Addr, v4)))
	fmt.Println(hex.EncodeToString(funnel.Append(nil, funnel.Addr, mapped)))
	fmt.Println(hex.EncodeToString(funnel.Append(nil, funnel.IP, ip)))

	// The zone is dropped, as InetAddress.getAddress drops the scope ID.
	fmt.Println(hex.EncodeToString(funnel.Append(nil, funnel.Addr, netip.MustParseAddr("fe80::1%eth0"))))
	// The port follows the address, 2 bytes little-endian (443 = 0x01bb).
	fmt.Println(hex.EncodeToString(funnel.Append(nil, funnel.AddrPort, netip.MustParseAddrPort("192.0.2.1:443"))))

	seen, err := bloom.New(funnel.Addr, 10000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	seen.Put(v4)
	fmt.Println(seen.MightContain(mapped))
	// Output:
	// c0000201
	// c0000201
	// c0000201
	// fe800000000000000000000000000001
	// c0000201bb01
	// true
}

// Flow is a connection's 5-tuple.
type Flow struct {
	Proto    uint8 // the IP protocol number: 6 for TCP, 17 for UDP
	Src, Dst netip.AddrPort
}

// flowFunnel feeds a Flow unambiguously: each address is 4 or 16 bytes, so
// each gets its length in front of it. The matching Java Funnel, for a
// record Flow(byte proto, InetSocketAddress src, InetSocketAddress dst):
//
//	enum FlowFunnel implements Funnel<Flow> {
//	  INSTANCE;
//
//	  @Override
//	  public void funnel(Flow flow, PrimitiveSink into) {
//	    into.putByte(flow.proto());
//	    putSocket(flow.src(), into);
//	    putSocket(flow.dst(), into);
//	  }
//
//	  static void putSocket(InetSocketAddress sock, PrimitiveSink into) {
//	    byte[] addr = sock.getAddress().getAddress();
//	    into.putByte((byte) addr.length) // the length tag: 4 or 16
//	        .putBytes(addr)
//	        .putShort((short) sock.getPort());
//	  }
//	}
//
// (An enum rather than a lambda, as Guava's own funnels are, because
// BloomFilter.equals and putAll compare funnels with equals.)
var flowFunnel = funnel.Func[Flow](func(f Flow, into funnel.Sink) {
	into.PutByte(f.Proto)
	putTaggedAddrPort(f.Src, into)
	putTaggedAddrPort(f.Dst, into)
})

// putTaggedAddrPort feeds the length of the address bytes funnel.AddrPort
// feeds, then what it feeds. Unmap gives an IPv4-mapped address the length
// of the 4 bytes it feeds, as Java's getAddress().length is for it; the zero
// Addr has length 0 and feeds nothing.
func putTaggedAddrPort(ap netip.AddrPort, into funnel.Sink) {
	into.PutByte(byte(ap.Addr().Unmap().BitLen() / 8))
	funnel.AddrPort.Funnel(ap, into)
}

// untaggedFlowFunnel is flowFunnel without the length tags. Do not copy it:
// TestFlowTagPreventsCollision shows two flows it cannot tell apart.
var untaggedFlowFunnel = funnel.Func[Flow](func(f Flow, into funnel.Sink) {
	into.PutByte(f.Proto)
	funnel.AddrPort.Funnel(f.Src, into)
	funnel.AddrPort.Funnel(f.Dst, into)
})

// A key with two addresses needs the length of each in front of it: the
// bytes alone do not say where the source ends and the destination begins.
func Example_fiveTuple() {
	flows, err := bloom.New(flowFunnel, 100000, 0.001)
	if err != nil {
		log.Fatal(err)
	}
	tcp := Flow{
		Proto: 6,
		Src:   netip.MustParseAddrPort("[2001:db8::1]:443"),
		Dst:   netip.MustParseAddrPort("192.0.2.1:8080"),
	}
	flows.Put(tcp)
	fmt.Println(flows.MightContain(tcp))

	// Without the tags, this flow feeds the same 25 bytes as tcp, and so is
	// in any filter tcp is in:
	lookalike := Flow{
		Proto: 6,
		Src:   netip.MustParseAddrPort("32.1.13.184:0"),
		Dst:   netip.MustParseAddrPort("[::1:bb01:c000:201]:8080"),
	}
	fmt.Println(hex.EncodeToString(funnel.Append(nil, untaggedFlowFunnel, tcp)))
	fmt.Println(hex.EncodeToString(funnel.Append(nil, untaggedFlowFunnel, lookalike)))
	// With them, it does not:
	fmt.Println(hex.EncodeToString(funnel.Append(nil, flowFunnel, tcp)))
	fmt.Println(hex.EncodeToString(funnel.Append(nil, flowFunnel, lookalike)))
	fmt.Println(flows.MightContain(lookalike))
	// Output:
	// true
	// 0620010db8000000000000000000000001bb01c0000201901f
	// 0620010db8000000000000000000000001bb01c0000201901f
	// 061020010db8000000000000000000000001bb0104c0000201901f
	// 060420010db800001000000000000000000001bb01c0000201901f
	// false
}

// Login is a key of an identity and the address it came from.
type Login struct {
	User string
	From netip.AddrPort
}

// loginFunnel puts the length of the user name in front of it, so that the
// address cannot be read as part of the name. The address needs no tag of
// its own: it is the last field, so it is all the bytes after the name, and
// their number says whether it is IPv4 or IPv6. The matching Java Funnel:
//
//	enum LoginFunnel implements Funnel<Login> {
//	  INSTANCE;
//
//	  @Override
//	  public void funnel(Login login, PrimitiveSink into) {
//	    byte[] user = login.user().getBytes(UTF_8);
//	    into.putInt(user.length).putBytes(user) // the length tag
//	        .putBytes(login.from().getAddress().getAddress())
//	        .putShort((short) login.from().getPort());
//	  }
//	}
//
// The length is of the UTF-8 bytes on both sides, so non-ASCII names agree
// too (Java's user().length() would count UTF-16 units instead).
var loginFunnel = funnel.Func[Login](func(l Login, into funnel.Sink) {
	into.PutInt32(int32(len(l.User)))
	into.PutString(l.User)
	funnel.AddrPort.Funnel(l.From, into)
})

// untaggedLoginFunnel is loginFunnel without the length. Do not copy it:
// TestLoginTagPreventsCollision shows two logins it cannot tell apart.
var untaggedLoginFunnel = funnel.Func[Login](func(l Login, into funnel.Sink) {
	into.PutString(l.User)
	funnel.AddrPort.Funnel(l.From, into)
})

// A variable-length field followed by another field needs its length in
// front of it.
func Example_identityAndAddrPort() {
	logins, err := bloom.New(loginFunnel, 100000, 0.001)
	if err != nil {
		log.Fatal(err)
	}
	alice := Login{"alice@example.com", netip.MustParseAddrPort("10.0.0.1:443")}
	logins.Put(alice)
	fmt.Println(logins.MightContain(alice))

	// Without the length, a shorter name whose IPv6 address begins with the
	// rest of alice's name feeds the same bytes:
	lookalike := Login{"alice", netip.MustParseAddrPort("[4065:7861:6d70:6c65:2e63:6f6d:a00:1]:443")}
	fmt.Printf("%q\n", funnel.Append(nil, untaggedLoginFunnel, alice))
	fmt.Printf("%q\n", funnel.Append(nil, untaggedLoginFunnel, lookalike))
	// With it, the two differ from the first byte:
	fmt.Printf("%q\n", funnel.Append(nil, loginFunnel, alice))
	fmt.Printf("%q\n", funnel.Append(nil, loginFunnel, lookalike))
	fmt.Println(logins.MightContain(lookalike))
	// Output:
	// true
	// "alice@example.com\n\x00\x00\x01\xbb\x01"
	// "alice@example.com\n\x00\x00\x01\xbb\x01"
	// "\x11\x00\x00\x00alice@example.com\n\x00\x00\x01\xbb\x01"
	// "\x05\x00\x00\x00alice@example.com\n\x00\x00\x01\xbb\x01"
	// false
}
