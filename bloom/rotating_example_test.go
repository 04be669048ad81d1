package bloom_test

import (
	"bytes"
	"fmt"
	"log"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

func ExampleRotating() {
	// Remember destinations for one to two minutes, up to 100,000 new ones
	// a minute, in 2 × 120 KB. A manual clock stands in for the real one,
	// which is the default.
	clock := bloom.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
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
	fmt.Println(snapshot.Len())

	// After it: the same sizing reads them back.
	restored, err := bloom.ReadRotating(&snapshot, funnel.String, 1000, 0.01, time.Hour)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(restored.MightContain("10.0.0.1:443"))
	fmt.Println(restored)
	// Output:
	// 2412
	// true
	// bloom.Rotating{funnel.String MURMUR128_MITZ_64 2×9600 bits, 7 hash functions, window 1h0m0s}
}
