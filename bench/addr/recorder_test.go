package addr

import (
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testN is the size the tests give the filters: small enough to make fast,
// large enough that the few thousand keys of a test are never false
// positives, barring a broken filter.
const testN = 100_000

// mustNew is New(impl, testN, window, shared), failing t on error.
func mustNew(t *testing.T, impl Impl, window time.Duration, shared bool) Recorder {
	t.Helper()
	rec, err := New(impl, testN, window, shared)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// countNew records keys in rec and returns how many it called new.
func countNew(rec Recorder, keys []netip.AddrPort) int {
	n := 0
	for _, k := range keys {
		if rec.Record(k) {
			n++
		}
	}
	return n
}

// recorders runs test for every impl, and for the map both as it is and
// shared behind its lock.
func recorders(t *testing.T, test func(t *testing.T, impl Impl, shared bool)) {
	for _, impl := range Impls {
		for _, shared := range []bool{false, true} {
			if shared && impl != MapSweep {
				continue // the others are the same either way
			}
			t.Run(fmt.Sprintf("impl=%s/shared=%v", impl, shared), func(t *testing.T) {
				t.Parallel()
				test(t, impl, shared)
			})
		}
	}
}

func TestNewUnknown(t *testing.T) {
	if _, err := New("btree", testN, time.Second, false); err == nil {
		t.Error(`New("btree") succeeded`)
	}
	if _, err := New(Rotating, -1, time.Second, false); err == nil {
		t.Error("New(Rotating) with -1 values succeeded")
	}
}

func TestRecordFirstAndSecondSight(t *testing.T) {
	recorders(t, func(t *testing.T, impl Impl, shared bool) {
		rec := mustNew(t, impl, LongWindow, shared)
		keys := Keys(0, 5000)
		if n := countNew(rec, keys); n != len(keys) {
			t.Errorf("first sight: %d of %d keys new, want all", n, len(keys))
		}
		rec.SetTime(Epoch.Add(time.Minute))
		if n := countNew(rec, keys); n != 0 {
			t.Errorf("second sight, a minute later: %d of %d keys new, want none", n, len(keys))
		}
	})
}

// TestRecordForgets records three groups of keys at Epoch and records each
// again later: the maps remember a key for exactly the window, and a
// Rotating for one to two windows. A Filter never forgets.
func TestRecordForgets(t *testing.T) {
	const window = 4 * time.Second
	recorders(t, func(t *testing.T, impl Impl, shared bool) {
		rec := mustNew(t, impl, window, shared)
		groups := [][]netip.AddrPort{Keys(0, 1000), Keys(1000, 1000), Keys(2000, 1000)}
		for _, g := range groups {
			countNew(rec, g)
		}
		for i, c := range []struct {
			at time.Duration
			// want is how many keys of the group are new then, for a map,
			// a Rotating and a Filter.
			mapNew, rotatingNew, filterNew int
		}{
			{window - time.Millisecond, 0, 0, 0},
			{window, 1000, 0, 0},
			{2 * window, 1000, 1000, 0},
		} {
			rec.SetTime(Epoch.Add(c.at))
			want := map[Impl]int{MapSweep: c.mapNew, SyncMap: c.mapNew, Rotating: c.rotatingNew, Filter: c.filterNew}[impl]
			if n := countNew(rec, groups[i]); n != want {
				t.Errorf("group %d, recorded at %v: %d of 1000 keys new, want %d", i, c.at, n, want)
			}
		}
	})
}

// lenOf returns the number of entries of a map recorder, or false.
func lenOf(rec Recorder) (int, bool) {
	switch m := rec.(type) {
	case *MapSweeper:
		return m.Len(), true
	case *lockedMapSweeper:
		return m.m.Len(), true
	case *SyncMapSweeper:
		return m.Len(), true
	}
	return 0, false
}

// TestSweep checks that a sweep deletes exactly the entries older than the
// window, and that only a quarter window after the last one, while Record
// calls an old entry new even before it is swept.
func TestSweep(t *testing.T) {
	const window = 4 * time.Second
	for _, impl := range []Impl{MapSweep, SyncMap} {
		t.Run("impl="+string(impl), func(t *testing.T) {
			rec := mustNew(t, impl, window, false)
			early, late := Keys(0, 100), Keys(100, 50)
			countNew(rec, early)
			rec.SetTime(Epoch.Add(time.Second)) // sweeps, deleting nothing
			countNew(rec, late)
			checkLen := func(when string, want int) {
				t.Helper()
				if n, _ := lenOf(rec); n != want {
					t.Errorf("%s: %d entries, want %d", when, n, want)
				}
			}
			checkLen("after a sweep at 1s", 150)
			rec.SetTime(Epoch.Add(window + 500*time.Millisecond)) // sweeps: early is older than the window
			checkLen("after a sweep at the window + 0.5s", 50)
			rec.SetTime(Epoch.Add(window + 1200*time.Millisecond)) // too soon to sweep
			checkLen("at the window + 1.2s, no sweep due", 50)
			if n := countNew(rec, late[:10]); n != 10 {
				t.Errorf("%d of 10 keys a window old, not yet swept, new; want all", n)
			}
			rec.SetTime(Epoch.Add(window + 500*time.Millisecond + window/SweepEvery)) // sweeps the other 40
			checkLen("after the last sweep", 10)
		})
	}
}

// TestRecordConcurrent records the same keys from many goroutines, in
// different orders, while the time advances. Each key must be new to
// exactly one goroutine for the maps, whose lookup and store are one atomic
// step, and to at least one for the filters, where two goroutines putting
// the same key at once may both find it new.
func TestRecordConcurrent(t *testing.T) {
	const goroutines = 8
	recorders(t, func(t *testing.T, impl Impl, shared bool) {
		if impl == MapSweep && !shared {
			t.Skip("a MapSweeper is not safe for concurrent use; shared=true is")
		}
		rec := mustNew(t, impl, LongWindow, true)
		keys := Keys(0, 4096)
		newTo := make([]atomic.Int32, len(keys))
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range keys {
					i := (j*(2*g+1) + g*101) % len(keys) // an odd stride visits every key
					if rec.Record(keys[i]) {
						newTo[i].Add(1)
					}
					if g == 0 && j%256 == 0 {
						rec.SetTime(Epoch.Add(time.Duration(j) * time.Millisecond))
					}
				}
			}()
		}
		wg.Wait()
		for i := range newTo {
			n := newTo[i].Load()
			if n == 0 || (impl == MapSweep || impl == SyncMap) && n != 1 {
				t.Fatalf("key %d new to %d goroutines", i, n)
			}
		}
		if n := countNew(rec, keys); n != 0 {
			t.Errorf("afterwards, %d of %d keys new, want none", n, len(keys))
		}
	})
}

func TestBytesPerKey(t *testing.T) {
	// A map entry holds at least the key and the time; a sync.Map's also
	// the key's interface, a pointer to the time and the time.
	least := map[Impl]float64{MapSweep: 32 + 24, SyncMap: 32 + 16 + 8 + 8}
	for _, impl := range Impls {
		perKey, err := BytesPerKey(impl, testN)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.1f B/key", impl, perKey)
		switch impl {
		case Rotating, Filter:
			// The formula is exact; the heap of a new recorder must agree,
			// but for a few small structs and the rounding of the bits up
			// to whole pages.
			heap, err := HeapGrowth(func() (any, error) { return New(impl, testN, LongWindow, false) })
			if err != nil {
				t.Fatal(err)
			}
			if bits := int64(perKey * testN); heap < bits || heap > bits+32<<10 {
				t.Errorf("%s: a new one grows the heap by %d bytes, want %d plus at most 32 KiB", impl, heap, bits)
			}
		default:
			if perKey < least[impl] || perKey > 4*least[impl] {
				t.Errorf("%s: %.1f B/key, want between %v and %v", impl, perKey, least[impl], 4*least[impl])
			}
		}
	}
}
