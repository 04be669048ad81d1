package funnel_test

import (
	"encoding/hex"
	"fmt"
	"log"
	"math"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

func ExampleSlice() {
	paths, err := bloom.New(funnel.Slice(funnel.String), 10000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	paths.Put([]string{"ab", "c"})
	fmt.Println(paths.MightContain([]string{"ab", "c"}))
	// Sequential would feed "abc" for all three.
	fmt.Println(paths.MightContain([]string{"a", "bc"}), paths.MightContain([]string{"abc"}))
	// The count, then each element's length and bytes.
	fmt.Println(hex.EncodeToString(funnel.Append(nil, funnel.Slice(funnel.String), []string{"ab", "c"})))
	// Output:
	// true
	// false false
	// 020000000200000061620100000063
}

func ExampleFloat64() {
	prices, err := bloom.New(funnel.Float64, 10000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	prices.Put(9.99)
	prices.Put(math.NaN())
	fmt.Println(prices.MightContain(9.99), prices.MightContain(math.NaN()))
	// Values are their bits: 0 and -0 are two values.
	fmt.Println(prices.MightContain(0), prices.MightContain(math.Copysign(0, -1)))
	// Java's putDouble(9.99): the raw bits, little-endian.
	fmt.Println(hex.EncodeToString(funnel.Append(nil, funnel.Float64, 9.99)))
	// Output:
	// true true
	// false false
	// 7b14ae47e1fa2340
}

func ExampleUint32() {
	// Java's Funnels.integerFunnel() for the int with the same bits:
	// Integer.parseUnsignedInt("4294967295") is -1.
	fmt.Println(hex.EncodeToString(funnel.Append(nil, funnel.Uint32, math.MaxUint32)))
	fmt.Println(hex.EncodeToString(funnel.Append(nil, funnel.Int32, -1)))
	// Output:
	// ffffffff
	// ffffffff
}

func ExampleInt() {
	// An int is a Java long on every platform, as funnel.Int64 feeds it.
	fmt.Println(hex.EncodeToString(funnel.Append(nil, funnel.Int, -2)))
	fmt.Println(hex.EncodeToString(funnel.Append(nil, funnel.Uint, 2)))
	// Output:
	// feffffffffffffff
	// 0200000000000000
}
