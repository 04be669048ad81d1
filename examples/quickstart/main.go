package main

import (
	"bytes"
	"fmt"
	"log"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

func main() {
	// Room for a million strings at a 1% false-positive rate: about 1.2 MB.
	seen, err := bloom.New(funnel.String, 1_000_000, 0.01)
	if err != nil {
		log.Fatal(err) // bad size or rate: errors.Is(err, bloom.ErrInvalidArgument)
	}
	seen.Put("10.0.0.1:443")
	fmt.Println(seen.MightContain("10.0.0.1:443")) // true
	fmt.Println(seen.MightContain("10.0.0.2:443")) // false: certainly never put

	// Guava's format: Java reads it with
	// BloomFilter.readFrom(in, Funnels.stringFunnel(UTF_8)).
	var buf bytes.Buffer
	if _, err := seen.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}

	// And reads what Java's writeTo wrote.
	back, err := bloom.ReadFrom(&buf, funnel.String)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(back.Equal(seen)) // true
}
