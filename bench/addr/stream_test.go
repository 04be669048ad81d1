package addr

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestNewStream(t *testing.T) {
	for _, n := range []int{0, 3, 1000} {
		if _, err := NewStream(NewMapSweeper(time.Second), Keys(0, n)); err == nil {
			t.Errorf("NewStream of %d keys succeeded", n)
		}
	}
}

// clockCheck is a Recorder that checks how a Stream tells the time: never
// back, and never in two SetTime calls at once.
type clockCheck struct {
	t       *testing.T
	busy    atomic.Bool
	now     atomic.Int64
	records atomic.Int64
}

func (c *clockCheck) Record(netip.AddrPort) bool { c.records.Add(1); return false }

func (c *clockCheck) SetTime(now time.Time) {
	if !c.busy.CompareAndSwap(false, true) {
		c.t.Error("two SetTime calls at once")
	}
	if t, last := now.UnixNano(), c.now.Load(); t < last {
		c.t.Errorf("SetTime(%v) after SetTime(%v)", now, time.Unix(0, last))
	} else {
		c.now.Store(t)
	}
	c.busy.Store(false)
}

func TestStreamClock(t *testing.T) {
	rec := &clockCheck{t: t}
	rec.now.Store(Epoch.UnixNano())
	s, err := NewStream(rec, Keys(0, 1<<10))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cursor(0)
	for range 3*TickEvery - 1 {
		c.Next()
	}
	if want := Epoch.Add(2 * TickEvery * OpTime); !s.Now().Equal(want) || rec.now.Load() != want.UnixNano() {
		t.Errorf("after 3·TickEvery−1 keys, the stream says %v and told %v; want %v",
			s.Now(), time.Unix(0, rec.now.Load()).UTC(), want)
	}
	c.Next()
	s.Skip(time.Second)
	if want := Epoch.Add(3*TickEvery*OpTime + time.Second); !s.Now().Equal(want) || rec.now.Load() != want.UnixNano() {
		t.Errorf("after 3·TickEvery keys and a second, the stream says %v and told %v; want %v",
			s.Now(), time.Unix(0, rec.now.Load()).UTC(), want)
	}
	if n := rec.records.Load(); n != 3*TickEvery {
		t.Errorf("%d keys recorded, want %d", n, 3*TickEvery)
	}
}

// TestStreamWarm checks the steady state Warm leaves: every key of the
// stream seen, in both generations of a Rotating.
func TestStreamWarm(t *testing.T) {
	keys := ZipfKeys(1 << 12)
	recorders(t, func(t *testing.T, impl Impl, shared bool) {
		rec := mustNew(t, impl, LongWindow, shared)
		s, err := NewStream(rec, keys)
		if err != nil {
			t.Fatal(err)
		}
		s.Warm(LongWindow)
		if n := countNew(rec, keys); n != 0 {
			t.Errorf("after Warm, %d keys of the stream new; want none", n)
		}
		if r, ok := rec.(*rotatingRecorder); ok {
			st := r.r.Stats()
			if st.Rotations != 1 || st.Current.Inserts == 0 || st.Previous.Inserts != st.Current.Inserts {
				t.Errorf("after Warm: %d rotations, %d inserts in the current generation and %d in the previous; want 1 and the same number, not 0",
					st.Rotations, st.Current.Inserts, st.Previous.Inserts)
			}
		}
	})
}

// TestStreamConcurrent runs cursors from several goroutines through many
// windows while the stream rotates the Rotating and sweeps the maps.
func TestStreamConcurrent(t *testing.T) {
	const (
		goroutines = 4
		perCursor  = 32 * TickEvery
		window     = 5 * time.Millisecond // 5000 keys
		total      = goroutines * perCursor * OpTime
	)
	keys := ZipfKeys(1 << 14)
	// run runs the cursors and returns the stream and how many keys were new.
	run := func(t *testing.T, rec Recorder) (*Stream, int64) {
		t.Helper()
		s, err := NewStream(rec, keys)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var fresh atomic.Int64
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := s.Cursor(g * len(keys) / goroutines)
				for range perCursor {
					if c.Next() {
						fresh.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if want := Epoch.Add(total); !s.Now().Equal(want) {
			t.Errorf("the stream's clock says %v, want %v", s.Now(), want)
		}
		return s, fresh.Load()
	}
	t.Run("impl=clock", func(t *testing.T) {
		t.Parallel()
		rec := &clockCheck{t: t}
		run(t, rec)
		if n := rec.records.Load(); n != goroutines*perCursor {
			t.Errorf("%d keys recorded, want %d", n, goroutines*perCursor)
		}
	})
	recorders(t, func(t *testing.T, impl Impl, shared bool) {
		if impl == Filter || impl == MapSweep && !shared {
			t.Skip("a Filter never forgets, and a MapSweeper needs its lock")
		}
		rec := mustNew(t, impl, window, true)
		s, fresh := run(t, rec)
		// Each window brings about a thousand keys not seen in the one
		// before.
		if fresh < int64(total/window)*100 {
			t.Errorf("%d keys new in %d windows, want more", fresh, total/window)
		}
		t.Logf("%d keys new in %d windows", fresh, total/window)
		if r, ok := rec.(*rotatingRecorder); ok {
			// The last time told may lag the stream's by a tick or so.
			if n, want := r.r.Stats().Rotations, int64(total/window); n < want-1 || n > want {
				t.Errorf("%d rotations, want %d or %d", n, want-1, want)
			}
			return
		}
		s.Skip(window + window/SweepEvery)
		if n, _ := lenOf(rec); n != 0 {
			t.Errorf("%d entries after a window with no keys, want none", n)
		}
	})
}
