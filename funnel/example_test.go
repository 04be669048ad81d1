package funnel_test

import (
	"encoding/hex"
	"fmt"
	"log"

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

func ExampleSequential() {
	// Guava's Funnels.sequentialFunnel(Funnels.longFunnel()) for a List<Long>.
	path := funnel.Sequential(funnel.Int64)
	fmt.Println(hex.EncodeToString(funnel.Append(nil, path, []int64{1, 2})))
	// Output:
	// 01000000000000000200000000000000
}
