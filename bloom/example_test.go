package bloom_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"net/netip"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

func Example() {
	// Room for a million strings at a 1% false-positive rate: about 1.2 MB.
	seen, err := bloom.New(funnel.String, 1_000_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	seen.Put("10.0.0.1:443")
	fmt.Println(seen.MightContain("10.0.0.1:443"))
	fmt.Println(seen.MightContain("10.0.0.2:443"))
	fmt.Println(seen.BitSize(), seen.NumHashFunctions())
	// Output:
	// true
	// false
	// 9585088 7
}

func ExampleReadFrom() {
	// Written by Java:
	//   BloomFilter<String> f = BloomFilter.create(Funnels.stringFunnel(UTF_8), 10, 0.03);
	//   f.put("a"); f.put("b"); f.put("c");
	//   f.writeTo(out);
	javaBytes, _ := hex.DecodeString("010500000002a0080280008402000002400800800801")

	f, err := bloom.ReadFrom(bytes.NewReader(javaBytes), funnel.String)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f)
	fmt.Println(f.MightContain("a"), f.MightContain("b"), f.MightContain("c"), f.MightContain("d"))
	// Output:
	// bloom.Filter{funnel.String MURMUR128_MITZ_64 128 bits, 5 hash functions}
	// true true true false
}

func ExampleFilter_WriteTo() {
	f, err := bloom.New(funnel.String, 1, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	f.Put("hello")
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}
	// Strategy ordinal, k, word count, then the words; Java's
	// BloomFilter.readFrom reads these bytes.
	fmt.Println(hex.EncodeToString(buf.Bytes()))
	// Output:
	// 0107000000018010004009002004
}

func ExampleFilter_PutAll() {
	a, _ := bloom.New(funnel.Int64, 1000, 0.01)
	b, _ := bloom.New(funnel.Int64, 1000, 0.01)
	a.Put(1)
	b.Put(2)
	if err := a.PutAll(b); err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.MightContain(1), a.MightContain(2))

	small, _ := bloom.New(funnel.Int64, 10, 0.01)
	fmt.Println(a.PutAll(small))
	// Output:
	// true true
	// bloom: incompatible filters: filters must have the same size underlying bit arrays (9600 != 128)
}

func ExampleSize() {
	bits, k, err := bloom.Size(1_000_000, 0.001)
	fmt.Println(bits, k, err)
	_, _, err = bloom.Size(100, 1.5)
	fmt.Println(err)
	// Output:
	// 14377600 10 <nil>
	// bloom: invalid argument: false positive probability (1.5) must be < 1.0
}

// A proxy checks a batch of client addresses at once: on a large filter the
// batch calls overlap the memory reads of the addresses.
func ExampleFilter_MightContainMany() {
	seen, err := bloom.New(funnel.Addr, 1_000_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	seen.PutMany([]netip.Addr{
		netip.MustParseAddr("10.0.0.1"),
		netip.MustParseAddr("2001:db8::1"),
	})
	batch := []netip.Addr{
		netip.MustParseAddr("10.0.0.1"),
		netip.MustParseAddr("10.0.0.2"),
		netip.MustParseAddr("::ffff:10.0.0.1"), // the same key as 10.0.0.1
	}
	answers := make([]bool, 0, len(batch))
	fmt.Println(seen.MightContainMany(answers, batch))
	// Output: [true false true]
}

// A batch job fills a filter on one goroutine, with plain writes, and
// writes it out for a Java service, which reads it with
// BloomFilter.readFrom.
func ExampleBuilder() {
	builder, err := bloom.NewBuilder(funnel.String, 1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	builder.PutMany([]string{"alice@example.com", "bob@example.com"})
	builder.Put("carol@example.com")
	filter := builder.Filter() // safe for concurrent use from here on

	var buf bytes.Buffer
	if _, err := filter.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}
	// The same bytes as from a filter filled with atomic writes.
	atomic, _ := bloom.New(funnel.String, 1000, 0.01)
	atomic.PutMany([]string{"alice@example.com", "bob@example.com", "carol@example.com"})
	same, _ := atomic.MarshalBinary()
	fmt.Println(buf.Len(), bytes.Equal(buf.Bytes(), same))
	// Output: 1206 true
}

// A filter in a JSON document is a string: Guava's bytes in base64, which a
// Java service decodes with Base64.getDecoder() and reads with
// BloomFilter.readFrom. Decoding needs a filter made beforehand, for its
// funnel.
func ExampleFilter_MarshalText() {
	type state struct {
		Seen *bloom.Filter[string] `json:"seen"`
	}
	seen, err := bloom.New(funnel.String, 10, 0.1)
	if err != nil {
		log.Fatal(err)
	}
	seen.Put("a")
	doc, err := json.Marshal(state{Seen: seen})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(doc))

	back, err := bloom.New(funnel.String, 1, 0.5) // its size comes from the document
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(doc, &state{Seen: back}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(back.MightContain("a"), back.Equal(seen))
	// Output:
	// {"seen":"AQMAAAABIAAACAAAAgA="}
	// true true
}
