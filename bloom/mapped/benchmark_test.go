package mapped_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/mapped"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// benchDir holds the filter files of the benchmarks, which TestMain
// removes.
var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// A lookupFixture is a filter of n int64 keys, 0 to n−1, at p = 0.01, in
// memory and mapped from the file it was written to.
type lookupFixture struct {
	memory *bloom.Filter[int64]
	mapped *mapped.Filter[int64]
}

var lookupFixtures struct {
	sync.Mutex
	m map[int64]*lookupFixture
}

func fixture(b *testing.B, n int64) *lookupFixture {
	lookupFixtures.Lock()
	defer lookupFixtures.Unlock()
	if fx := lookupFixtures.m[n]; fx != nil {
		return fx
	}
	f, err := bloom.New(funnel.Int64, n, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]int64, 1<<16)
	for from := int64(0); from < n; from += int64(len(keys)) {
		m := min(int64(len(keys)), n-from)
		for i := range keys[:m] {
			keys[i] = from + int64(i)
		}
		f.PutMany(keys[:m])
	}
	if benchDir == "" {
		if benchDir, err = os.MkdirTemp("", "mapped-bench-"); err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(benchDir, fmt.Sprintf("n%d.bin", n))
	file, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.WriteTo(file); err != nil {
		b.Fatal(err)
	}
	if err := file.Close(); err != nil {
		b.Fatal(err)
	}
	m, err := mapped.Open(path, funnel.Int64)
	if err != nil {
		b.Fatal(err)
	}
	// The lookups are timed once the file's pages are mapped in, as in a
	// process that has served for a while.
	if m.BitCount() != f.BitCount() {
		b.Fatal("the mapped filter differs from the filter in memory")
	}
	if lookupFixtures.m == nil {
		lookupFixtures.m = map[int64]*lookupFixture{}
	}
	fx := &lookupFixture{memory: f, mapped: m}
	lookupFixtures.m[n] = fx
	return fx
}

// A contender is one way of looking up a chunk of keys.
type contender struct {
	name string
	look func(fx *lookupFixture, keys []int64, dst []bool) []bool
}

// BenchmarkLookups times lookups on a filter of 1e6 keys (in the caches)
// and of 1e8 (about 114 MiB, far larger), in memory and mapped from a file,
// single and batched, of keys that were put (present) and that were not
// (absent). The contenders of one case take turns in one loop, 1,024 keys
// each, a round of turns after another: a busy machine's slow spells then
// fall on all of them alike, and the medians over the rounds leave out the
// rounds that a slow spell hit. ns/op is per key over all of them; each
// contender's median time per key is its metric "ns/key-<name>", and
// "mapped/memory" the median over the rounds of the ratio of the mapped
// filter's time to the filter in memory's.
//
// The batched case also times the filter in memory called 64 keys at a
// time ("memory-64"), which MightContainMany probes as one batch in two
// lanes of 32, the batches it took before they held 128 values.
func BenchmarkLookups(b *testing.B) {
	single := []contender{
		{"memory", func(fx *lookupFixture, keys []int64, dst []bool) []bool {
			for _, k := range keys {
				dst = append(dst, fx.memory.MightContain(k))
			}
			return dst
		}},
		{"mapped", func(fx *lookupFixture, keys []int64, dst []bool) []bool {
			for _, k := range keys {
				dst = append(dst, fx.mapped.MightContain(k))
			}
			return dst
		}},
	}
	batch := []contender{
		{"memory", func(fx *lookupFixture, keys []int64, dst []bool) []bool { return fx.memory.MightContainMany(dst, keys) }},
		{"mapped", func(fx *lookupFixture, keys []int64, dst []bool) []bool { return fx.mapped.MightContainMany(dst, keys) }},
		{"memory-64", func(fx *lookupFixture, keys []int64, dst []bool) []bool {
			for i := 0; i < len(keys); i += 64 {
				dst = fx.memory.MightContainMany(dst, keys[i:min(i+64, len(keys))])
			}
			return dst
		}},
	}
	for _, n := range []int64{1e6, 1e8} {
		for _, present := range []bool{true, false} {
			for _, op := range []struct {
				name       string
				contenders []contender
			}{{"single", single}, {"batch", batch}} {
				keyName := map[bool]string{true: "present", false: "absent"}[present]
				b.Run(fmt.Sprintf("n=%.0e/keys=%s/op=%s", float64(n), keyName, op.name), func(b *testing.B) {
					benchLookups(b, fixture(b, n), n, present, op.contenders)
				})
			}
		}
	}
}

func benchLookups(b *testing.B, fx *lookupFixture, n int64, present bool, contenders []contender) {
	const chunk = 1024
	// Present keys cycle through the first 2²⁰ put, absent ones through
	// as many never put; the lines they read are far more than the
	// caches hold.
	window := min(n, 1<<20)
	keys := make([]int64, chunk)
	dst := make([]bool, 0, chunk)
	elapsed := make([][]float64, len(contenders)) // ns a key, per round
	next := int64(0)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk * len(contenders) {
		for c := range contenders {
			for i := range keys {
				keys[i] = next + int64(i)
				if !present {
					keys[i] += n
				}
			}
			next = (next + chunk) % (window - chunk)
			start := time.Now()
			dst = contenders[c].look(fx, keys, dst[:0])
			elapsed[c] = append(elapsed[c], float64(time.Since(start).Nanoseconds())/chunk)
			if present && !dst[0] {
				b.Fatalf("%s: a key put is absent", contenders[c].name)
			}
		}
	}
	b.StopTimer()
	for c := range contenders {
		b.ReportMetric(median(elapsed[c]), "ns/key-"+contenders[c].name)
	}
	b.ReportMetric(medianRatio(elapsed[1], elapsed[0]), "mapped/memory")
	if len(contenders) > 2 {
		b.ReportMetric(medianRatio(elapsed[0], elapsed[2]), "memory/memory-64")
	}
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// medianRatio returns the median of a[i]/b[i].
func medianRatio(a, b []float64) float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] / b[i]
	}
	return median(r)
}
