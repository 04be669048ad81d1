package mapped_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/mapped"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// A service opens the filter file another program wrote (here bloom's
// WriteTo; Guava's writeTo writes the same bytes) in place, and looks
// values up in it without reading it first.
func Example() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "blocklist.bloom")

	// The program that builds the filter.
	blocked, err := bloom.New(funnel.String, 1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	blocked.PutMany([]string{"10.0.0.1:443", "10.0.0.2:443"})
	file, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := blocked.WriteTo(file); err != nil {
		log.Fatal(err)
	}
	if err := file.Close(); err != nil {
		log.Fatal(err)
	}

	// The service.
	f, err := mapped.Open(path, funnel.String)
	if err != nil {
		log.Fatal(err) // not a filter, or cut short: errors.Is(err, bloom.ErrCorrupt)
	}
	defer f.Close()
	fmt.Println(f.MightContain("10.0.0.1:443"))
	fmt.Println(f.MightContain("10.0.0.3:443"))
	fmt.Println(f.MightContainMany(nil, []string{"10.0.0.2:443", "10.0.0.4:443"}))
	fmt.Println(f)
	// Output:
	// true
	// false
	// [true false]
	// mapped.Filter{funnel.String MURMUR128_MITZ_64 9600 bits, 7 hash functions}
}
