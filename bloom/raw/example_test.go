package raw_test

import (
	"fmt"
	"log"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// The bits Guava sets for "hello" in a filter of 9600 bits and 7 hash
// functions, create(stringFunnel(UTF_8), 1000, 0.01).
func ExampleAppendIndexes() {
	h1, h2 := raw.Sum128(funnel.String, "hello")
	fmt.Println(int64(h1), int64(h2))
	fmt.Println(raw.AppendIndexes(nil, strategy.Murmur128Mitz64, h1, h2, 7, 9600))
	// Output:
	// -3758069500696749310 6565844092913065241
	// [898 8731 6964 3405 1638 9471 5912]
}

// A filter's size, from its header, before its bits are read.
func ExampleParseHeader() {
	f, err := bloom.New(funnel.String, 1_000_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	data, err := f.MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}
	h, err := raw.ParseHeader(data[:raw.HeaderSize])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(h.Strategy, h.NumHashFunctions, h.Words, h.Size())
	// Output:
	// MURMUR128_MITZ_64 7 149767 1198142
}

// A filter kept elsewhere hears of each value that changed the local copy
// by its hash.
func ExamplePutHash() {
	local, err := bloom.New(funnel.String, 1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	hasher := raw.HasherFor(raw.Funnel(local))
	var changed []raw.Hash
	for _, v := range []string{"a", "b", "a"} {
		h1, h2 := hasher.Sum128(v)
		if raw.PutHash(local, h1, h2) {
			changed = append(changed, raw.Hash{H1: h1, H2: h2})
		}
	}
	fmt.Println(len(changed), local.MightContain("b"))
	// Output:
	// 2 true
}
