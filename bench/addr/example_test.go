package addr_test

import (
	"fmt"
	"time"

	"github.com/mitzbloom/mitzbloom/bench/addr"
)

// A Recorder answers "new within the window?" and remembers the key; the
// time moves only when SetTime says so.
func Example() {
	for _, impl := range []addr.Impl{addr.Rotating, addr.MapSweep} {
		rec, err := addr.New(impl, 1000, time.Minute, false)
		if err != nil {
			fmt.Println(err)
			return
		}
		k := addr.Key(0)
		first, again := rec.Record(k), rec.Record(k)
		rec.SetTime(addr.Epoch.Add(3 * time.Minute)) // k is forgotten
		fmt.Printf("%s: %v: %v, %v; 3m later: %v\n", impl, k, first, again, rec.Record(k))
	}
	fmt.Println(addr.Key(9)) // one key in ten is IPv6
	// Output:
	// rotating: 202.93.59.117:80: true, false; 3m later: true
	// map-sweep: 202.93.59.117:80: true, false; 3m later: true
	// [2001:db8::594c:714e:71f8:b29]:443
}
