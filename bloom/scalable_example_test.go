package bloom_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

func ExampleScalable() {
	// How many distinct clients will the proxy see? Start small: the
	// filter grows, and its false-positive rate stays below 1%.
	seen, err := bloom.NewScalable(funnel.String, 1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	for i := range 20_000 {
		seen.Put(fmt.Sprintf("10.0.%d.%d", i/256, i%256))
	}
	fmt.Println(seen.MightContain("10.0.0.1"))
	stats := seen.Stats()
	fmt.Println(len(stats.Stages), "stages")
	fmt.Println(stats.ExpectedFPP < 0.01)
	// Output:
	// true
	// 5 stages
	// true
}

func ExampleReadScalable() {
	seen, err := bloom.NewScalable(funnel.String, 1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	for i := range 5000 {
		seen.Put(fmt.Sprint("client-", i))
	}

	// The stages, oldest first, each a filter in Guava's format.
	var snapshot bytes.Buffer
	if _, err := seen.WriteTo(&snapshot); err != nil {
		log.Fatal(err)
	}

	data := snapshot.Bytes()

	// The funnel alone reads them back, to look values up.
	lookups, err := bloom.ReadScalable(bytes.NewReader(data), funnel.String)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(lookups.MightContain("client-42"))
	fmt.Println(lookups)

	// With the sizing it was made with, it goes on growing.
	restored, err := bloom.ReadScalable(bytes.NewReader(data), funnel.String, bloom.WithSizing(1000, 0.01))
	if err != nil {
		log.Fatal(err)
	}
	for _, st := range restored.Stats().Stages {
		fmt.Printf("%d values at %.6f: %d bits, %d hash functions\n", st.ExpectedInsertions, st.FPP, st.BitSize, st.NumHashFunctions)
	}

	// Another sizing is an error that names both.
	_, err = bloom.ReadScalable(bytes.NewReader(data), funnel.String, bloom.WithSizing(2000, 0.01))
	fmt.Println(err)
	// Output:
	// true
	// bloom.Scalable{funnel.String MURMUR128_MITZ_64 3 stages, 102912 bits, read-only}
	// 1000 values at 0.001000: 14400 bits, 10 hash functions
	// 2000 values at 0.000900: 29248 bits, 10 hash functions
	// 4000 values at 0.000810: 59264 bits, 10 hash functions
	// bloom: incompatible filters: stage 0 has 14400 bits and 10 hash functions, but WithSizing(2000, 0.01), growth 2 and tightening 0.9 make it 28800 bits and 10 hash functions
}
