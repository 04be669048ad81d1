package bloom_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

func ExampleFilter_PutSeq() {
	blocked, err := bloom.New(funnel.String, 1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	// Any iter.Seq: lines of a file, keys of a map, rows of a query.
	blocked.PutSeq(strings.SplitSeq("10.0.0.1 10.0.0.2 10.0.0.3", " "))
	fmt.Println(blocked.MightContain("10.0.0.2"), blocked.ApproximateElementCount())
	// Output:
	// true 3
}

func ExampleFilter_MightContainSeq() {
	blocked, err := bloom.New(funnel.String, 1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	blocked.Put("10.0.0.2")
	for addr, maybe := range blocked.MightContainSeq(strings.SplitSeq("10.0.0.1 10.0.0.2", " ")) {
		fmt.Println(addr, maybe)
	}
	// Output:
	// 10.0.0.1 false
	// 10.0.0.2 true
}
