package addr

import (
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
)

const (
	// OpTime is the logical time between two keys of a [Stream]: the stream
	// of a proxy that sees a million connections a second.
	OpTime = time.Microsecond
	// TickEvery is how many keys a [Cursor] records between two reads of
	// the logical clock, so the clock ticks every millisecond of it.
	TickEvery = 1024

	// LongWindow is a window no benchmark reaches: nothing is forgotten,
	// no Rotating rotates and no map is swept while the stream runs.
	LongWindow = time.Hour
	// ShortWindow is a window of 250,000 keys, four to a pass over the
	// stream: while the stream runs, a Rotating rotates every window and
	// the maps are swept every quarter window (see SweepEvery).
	ShortWindow = 250 * time.Millisecond
)

// A Stream records a sequence of keys in a [Recorder] on a logical clock
// that advances [OpTime] per key. It is safe for concurrent use: each
// goroutine records through a [Cursor] of its own.
type Stream struct {
	rec  Recorder
	keys []netip.AddrPort
	ops  atomic.Int64 // keys recorded, as counted at the ticks, plus Skip
	mu   sync.Mutex   // serializes SetTime
}

// NewStream returns a stream that records keys, whose length must be a
// power of two, in rec.
func NewStream(rec Recorder, keys []netip.AddrPort) (*Stream, error) {
	if len(keys) == 0 || len(keys)&(len(keys)-1) != 0 {
		return nil, fmt.Errorf("addr: stream of %d keys, want a power of two", len(keys))
	}
	return &Stream{rec: rec, keys: keys}, nil
}

// Now returns the stream's logical time.
func (s *Stream) Now() time.Time {
	return Epoch.Add(time.Duration(s.ops.Load()) * OpTime)
}

// Skip moves the logical time forward by d, as a quiet spell with no keys,
// and tells the recorder.
func (s *Stream) Skip(d time.Duration) { s.tick(int64(d / OpTime)) }

// tick counts ops keys and tells the recorder the time, unless another
// goroutine is telling it already: that one, or the next tick, tells the
// later time.
func (s *Stream) tick(ops int64) {
	s.ops.Add(ops)
	if s.mu.TryLock() {
		s.rec.SetTime(s.Now())
		s.mu.Unlock()
	}
}

// Warm brings a stream into its steady state: it records every key once,
// lets a window pass without keys and records every key again. A Rotating
// then holds the stream's keys in both generations, as it does after running
// for more than a window, and the maps hold each key once, seen within the
// last pass.
func (s *Stream) Warm(window time.Duration) {
	c := s.Cursor(0)
	for pass := range 2 {
		if pass > 0 {
			s.Skip(window)
		}
		for range s.keys {
			c.Next()
		}
	}
}

// Cursor returns a cursor that starts at key start, modulo the number of
// keys.
func (s *Stream) Cursor(start int) *Cursor {
	return &Cursor{s: s, pos: start & (len(s.keys) - 1)}
}

// A Cursor records a stream's keys one after the other, wrapping around at
// the end. It is for one goroutine.
type Cursor struct {
	s       *Stream
	pos     int
	pending int64
}

// Next records the next key and reports whether it was new. Every
// TickEvery keys it advances the stream's clock.
func (c *Cursor) Next() bool {
	k := c.s.keys[c.pos]
	c.pos = (c.pos + 1) & (len(c.s.keys) - 1)
	if c.pending++; c.pending == TickEvery {
		c.pending = 0
		c.s.tick(TickEvery)
	}
	return c.s.rec.Record(k)
}

// BytesPerKey returns the memory an impl takes per distinct key when it holds
// n of them. For the filters it is exact: the bits of a filter sized for n
// values at FPP, two such filters for a Rotating, divided by n. For the
// maps it is the growth of the heap while a new recorder records n distinct
// keys, after a garbage collection on both sides, so it counts the map's
// buckets, its keys and values and anything they point to, at whatever load
// the map has reached at n; it is approximate, and wrong if other goroutines
// allocate meanwhile.
func BytesPerKey(impl Impl, n int) (float64, error) {
	switch impl {
	case Rotating, Filter:
		bits, _, err := bloom.Size(int64(n), FPP)
		if err != nil {
			return 0, fmt.Errorf("addr: %w", err)
		}
		gens := 1
		if impl == Rotating {
			gens = 2
		}
		return float64(bits/8) * float64(gens) / float64(n), nil
	}
	keys := Keys(0, n)
	heap, err := HeapGrowth(func() (any, error) {
		rec, err := New(impl, int64(n), LongWindow, false)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			rec.Record(k)
		}
		return rec, nil
	})
	runtime.KeepAlive(keys) // lest the second collection free them, and they count as a shrink
	return float64(heap) / float64(n), err
}

// HeapGrowth returns by how much the live heap grows from before build runs
// to after it, while what build returns is still alive, each measured after
// a garbage collection.
func HeapGrowth(build func() (any, error)) (int64, error) {
	var before, after runtime.MemStats
	// Two collections before, because one moves what sync.Pools hold to
	// their victim caches, and only the next frees it, which would then
	// count as a shrink.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	v, err := build()
	if err != nil {
		return 0, err
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc), nil
}
