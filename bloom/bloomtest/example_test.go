package bloomtest_test

import (
	"fmt"
	"log"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// A test steps a Rotating through its windows without sleeping.
func ExampleClock() {
	clock := bloomtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	seen, err := bloom.NewRotating(funnel.String, 1000, 0.01, time.Minute, bloom.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	seen.Put("10.0.0.1")
	clock.Advance(time.Minute) // one rotation: still remembered
	fmt.Println(seen.MightContain("10.0.0.1"))
	clock.Advance(time.Minute) // two: forgotten
	fmt.Println(seen.MightContain("10.0.0.1"))
	// Output:
	// true
	// false
}
