package bloom_test

import (
	"fmt"
	"log"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

func ExampleFilter_Clear() {
	seen, err := bloom.New(funnel.String, 1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	seen.Put("alice")
	seen.Clear() // say, at the start of each day
	fmt.Println(seen.MightContain("alice"), seen.BitCount())
	seen.Put("bob")
	fmt.Println(seen.MightContain("bob"))
	// Output:
	// false 0
	// true
}

func ExampleScalable_Clear() {
	s, err := bloom.NewScalable(funnel.Int, 100, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	for i := range 1000 {
		s.Put(i)
	}
	fmt.Println(len(s.Stats().Stages), "stages")
	s.Clear()
	fmt.Println(len(s.Stats().Stages), "stage,", s.MightContain(7))
	// Output:
	// 4 stages
	// 1 stage, false
}
