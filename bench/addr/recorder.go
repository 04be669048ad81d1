package addr

import (
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// FPP is the false-positive probability the filters are made with.
const FPP = 0.01

// Epoch is the logical time at which every [Stream] and every [Recorder]
// starts.
var Epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// A Recorder answers a proxy's question about a key and remembers the
// answer: Record(k) reports whether k is new, that is not seen within the
// window before now, and records k as seen now.
type Recorder interface {
	// Record records k as seen now and reports whether k is new.
	Record(k netip.AddrPort) bool
	// SetTime tells the recorder that it is now; now never goes back, and
	// calls of SetTime do not overlap (a Stream sees to both). The maps
	// sweep their old entries here, and a Rotating rotates.
	SetTime(now time.Time)
}

// An Impl names a kind of [Recorder].
type Impl string

// The recorders. A Filter never forgets, so it answers as the others do only
// while the window is longer than the stream.
const (
	// Rotating is a [bloom.Rotating] of Distinct values per generation at
	// FPP, on a [bloomtest.Clock] that SetTime advances. Record is Put.
	Rotating Impl = "rotating"
	// Filter is a single [bloom.Filter] of Distinct values at FPP. Record
	// is Put; SetTime does nothing.
	Filter Impl = "filter"
	// MapSweep is a map[netip.AddrPort]time.Time from keys to the time they
	// were last seen (see [MapSweeper]), behind a sync.Mutex when shared.
	MapSweep Impl = "map-sweep"
	// SyncMap is a [sync.Map] from keys to the time they were last seen
	// (see [SyncMapSweeper]).
	SyncMap Impl = "syncmap"
)

// Impls lists every Impl.
var Impls = []Impl{Rotating, Filter, MapSweep, SyncMap}

// SweepEvery is the share of a window between two sweeps of a map: a map
// holds the keys seen within the last 1 to 1+1/SweepEvery windows.
const SweepEvery = 4

// New returns an empty recorder of impl that remembers keys for window,
// standing at Epoch. A filter is sized for n values; a map starts empty and
// grows, as a proxy's would, whatever n. shared asks for a
// recorder safe for concurrent use: the map then gets a sync.Mutex; the
// others are safe for concurrent use anyway.
func New(impl Impl, n int64, window time.Duration, shared bool) (Recorder, error) {
	switch impl {
	case Rotating:
		clock := bloomtest.NewClock(Epoch)
		r, err := bloom.NewRotating(funnel.AddrPort, n, FPP, window, bloom.WithClock(clock))
		if err != nil {
			return nil, fmt.Errorf("addr: %w", err)
		}
		return &rotatingRecorder{r: r, clock: clock}, nil
	case Filter:
		f, err := bloom.New(funnel.AddrPort, n, FPP)
		if err != nil {
			return nil, fmt.Errorf("addr: %w", err)
		}
		return filterRecorder{f}, nil
	case MapSweep:
		m := NewMapSweeper(window)
		if shared {
			return &lockedMapSweeper{m: m}, nil
		}
		return m, nil
	case SyncMap:
		return NewSyncMapSweeper(window), nil
	}
	return nil, fmt.Errorf("addr: unknown recorder %q", impl)
}

type rotatingRecorder struct {
	r     *bloom.Rotating[netip.AddrPort]
	clock *bloomtest.Clock
}

func (r *rotatingRecorder) Record(k netip.AddrPort) bool { return r.r.Put(k) }

// SetTime runs the rotations due by now, in the caller's goroutine.
func (r *rotatingRecorder) SetTime(now time.Time) {
	if d := now.Sub(r.clock.Now()); d > 0 {
		r.clock.Advance(d)
	}
}

type filterRecorder struct{ f *bloom.Filter[netip.AddrPort] }

func (f filterRecorder) Record(k netip.AddrPort) bool { return f.f.Put(k) }
func (filterRecorder) SetTime(time.Time)              {}

// A MapSweeper is the exact recorder a proxy writes without a Bloom filter:
// a map from each key to the time it was last seen. Record looks the key up
// and stores the time, and an entry older than the window counts as new even
// before a sweep deletes it. Every window/[SweepEvery], SetTime sweeps the
// map, deleting the entries older than the window, which costs a pass over
// the whole map; its cost per key is that pass divided by the keys recorded
// between two sweeps, and the benchmarks time it with the keys.
//
// Record stores the time only when it differs from the stored one, so a
// frequent key costs one lookup, not a lookup and a store, between two
// ticks of the coarse clock; a Rotating likewise writes no bits for a key
// that has them all.
//
// A MapSweeper is not safe for concurrent use.
type MapSweeper struct {
	m         map[netip.AddrPort]time.Time
	now       time.Time
	window    time.Duration
	lastSweep time.Time
}

// NewMapSweeper returns an empty MapSweeper that remembers keys for window,
// standing at Epoch.
func NewMapSweeper(window time.Duration) *MapSweeper {
	return &MapSweeper{m: make(map[netip.AddrPort]time.Time), now: Epoch, window: window, lastSweep: Epoch}
}

// Record records k as seen now and reports whether k is new.
func (s *MapSweeper) Record(k netip.AddrPort) bool {
	t, ok := s.m[k]
	if !ok || t.Before(s.now) {
		s.m[k] = s.now
	}
	return !ok || s.now.Sub(t) >= s.window
}

// SetTime sets the time, and sweeps if window/SweepEvery has passed since
// the last sweep.
func (s *MapSweeper) SetTime(now time.Time) {
	s.now = now
	if now.Sub(s.lastSweep) >= s.window/SweepEvery {
		s.lastSweep = now
		cutoff := now.Add(-s.window)
		for k, t := range s.m {
			if !t.After(cutoff) {
				delete(s.m, k)
			}
		}
	}
}

// Len returns the number of keys in the map, expired or not.
func (s *MapSweeper) Len() int { return len(s.m) }

// lockedMapSweeper shares a MapSweeper the way a proxy would: behind a
// sync.Mutex, taken once per key. Every Record may write, so a RWMutex
// would not let two Records run at once either; a sweep holds the lock for
// its whole pass.
type lockedMapSweeper struct {
	mu sync.Mutex
	m  *MapSweeper
}

func (l *lockedMapSweeper) Record(k netip.AddrPort) bool {
	l.mu.Lock()
	isNew := l.m.Record(k)
	l.mu.Unlock()
	return isNew
}

func (l *lockedMapSweeper) SetTime(now time.Time) {
	l.mu.Lock()
	l.m.SetTime(now)
	l.mu.Unlock()
}

// A SyncMapSweeper is a MapSweeper built on a [sync.Map], safe for
// concurrent use without a lock. Each key maps to a pointer to its last-seen
// time in Unix nanoseconds, which Record updates in place with a
// compare-and-swap: storing a new value in a sync.Map would allocate on
// every Record, and a hot key's entry would bounce between cores. A new key
// costs a LoadOrStore, which allocates the key's interface and its entry.
//
// Sweeps run in SetTime as a MapSweeper's do, with Range and
// CompareAndDelete, while Records go on. A key recorded during a sweep
// just after the sweep read its old time is deleted anyway, and is thus
// reported new once more, a window early; sweeping without that race would
// need a lock.
type SyncMapSweeper struct {
	m         sync.Map // netip.AddrPort → *atomic.Int64
	now       atomic.Int64
	window    int64
	lastSweep int64 // only SetTime, which does not run concurrently with itself, uses it
}

// NewSyncMapSweeper returns an empty SyncMapSweeper that remembers keys for
// window, standing at Epoch.
func NewSyncMapSweeper(window time.Duration) *SyncMapSweeper {
	s := &SyncMapSweeper{window: int64(window), lastSweep: Epoch.UnixNano()}
	s.now.Store(Epoch.UnixNano())
	return s
}

// Record records k as seen now and reports whether k is new.
func (s *SyncMapSweeper) Record(k netip.AddrPort) bool {
	now := s.now.Load()
	v, ok := s.m.Load(k)
	if !ok {
		seen := new(atomic.Int64)
		seen.Store(now)
		if v, ok = s.m.LoadOrStore(k, seen); !ok {
			return true
		}
	}
	seen := v.(*atomic.Int64)
	last := seen.Load()
	if last < now {
		// A failed swap means another Record stored a time at least as
		// late: times never go back.
		seen.CompareAndSwap(last, now)
	}
	return now-last >= s.window
}

// SetTime sets the time, and sweeps if window/SweepEvery has passed since
// the last sweep. Calls of SetTime must not overlap.
func (s *SyncMapSweeper) SetTime(now time.Time) {
	t := now.UnixNano()
	s.now.Store(t)
	if t-s.lastSweep >= s.window/SweepEvery {
		s.lastSweep = t
		cutoff := t - s.window
		s.m.Range(func(k, v any) bool {
			if v.(*atomic.Int64).Load() <= cutoff {
				s.m.CompareAndDelete(k, v)
			}
			return true
		})
	}
}

// Len returns the number of keys in the map, expired or not. It ranges over
// the whole map.
func (s *SyncMapSweeper) Len() int {
	n := 0
	s.m.Range(func(any, any) bool { n++; return true })
	return n
}
