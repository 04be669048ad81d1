package raw_test

import (
	"fmt"

	"github.com/mitzbloom/mitzbloom/bloom/raw"
)

// The statistics of a filter whose bits are counted elsewhere: here one of
// 9600 bits and 7 hash functions, as bloom.New(f, 1000, 0.01) sizes it,
// with 4213 bits set, as Redis's BITCOUNT or Java's bitCount might report.
func ExampleExpectedFPP() {
	fmt.Printf("%.4f\n", raw.ExpectedFPP(4213, 9600, 7))
	fmt.Println(raw.ApproximateElementCount(4213, 9600, 7))
	// Output:
	// 0.0031
	// 792
}
