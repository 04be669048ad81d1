package bloom_test

import (
	"bytes"
	"fmt"
	"log"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
)

func ExampleRotating() {
	// Remember destinations for one to two minutes, up to 100,000 new ones
	// a minute, in 2 × 120 KB. A manual clock stands in for the real one,
	// which is the default.
	clock := bloomtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	seen, err := bloom.NewRotating(funnel.String, 100_000, 0.01, time.Minute, bloom.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(seen.Put("10.0.0.1:443")) // first time: true
	fmt.Println(seen.Put("10.0.0.1:443")) // seen within the window: false

	clock.Advance(90 * time.Second)
	fmt.Println(seen.MightContain("10.0.0.1:443")) // still remembered

	clock.Advance(time.Minute)
	fmt.Println(seen.MightContain("10.0.0.1:443")) // forgotten
	fmt.Println(seen.Stats().Rotations)
	// Output:
	// true
	// false
	// true
	// false
	// 2
}

func ExampleReadRotating() {
	seen, err := bloom.NewRotating(funnel.String, 1000, 0.01, time.Hour)
	if err != nil {
		log.Fatal(err)
	}
	seen.Put("10.0.0.1:443")

	// Before a restart: two filters in Guava's format, current first.
	var snapshot bytes.Buffer
	if _, err := seen.WriteTo(&snapshot); err != nil {
		log.Fatal(err)
	}
	data := snapshot.Bytes()
	fmt.Println(len(data))

	// After it: the funnel alone reads them back, to look values up.
	lookups, err := bloom.ReadRotating(bytes.NewReader(data), funnel.String)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(lookups.MightContain("10.0.0.1:443"))
	fmt.Println(lookups)

	// With the sizing and the window it was made with, it goes on rotating.
	restored, err := bloom.ReadRotating(bytes.NewReader(data), funnel.String, bloom.WithSizing(1000, 0.01), bloom.WithWindow(time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(restored.Put("10.0.0.2:443"))
	fmt.Println(restored)

	// Another sizing is an error that names both.
	_, err = bloom.ReadRotating(bytes.NewReader(data), funnel.String, bloom.WithSizing(2000, 0.01), bloom.WithWindow(time.Hour))
	fmt.Println(err)
	// Output:
	// 2412
	// true
	// bloom.Rotating{funnel.String MURMUR128_MITZ_64 2×9600 bits, 7 hash functions, read-only}
	// true
	// bloom.Rotating{funnel.String MURMUR128_MITZ_64 2×9600 bits, 7 hash functions, window 1h0m0s}
	// bloom: incompatible filters: current generation has 9600 bits and 7 hash functions, but WithSizing(2000, 0.01) makes generations of 19200 bits and 7 hash functions
}
